package api

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// WorkspaceView is a workspace as operators see it.
type WorkspaceView struct {
	WorkspaceID     string     `json:"workspaceId" format:"uuid"`
	Name            string     `json:"name"`
	Status          string     `json:"status" enum:"ACTIVE,SUSPENDED"`
	Shard           string     `json:"shard" doc:"The shard (database) that holds all of the workspace's rows"`
	ConsoleClientID string     `json:"consoleClientId" doc:"Client id for console calls (app and key management) with a user's sid"`
	CreatedAt       time.Time  `json:"createdAt"`
	SuspendedAt     *time.Time `json:"suspendedAt"`
	// Erasure is shown by GET and DELETE while the workspace is being erased.
	Erasure *ErasureView `json:"erasure,omitempty" doc:"Present (on GET and DELETE) while the workspace is being erased"`
}

// WorkspaceList is a page of workspaces.
type WorkspaceList struct {
	Items      []WorkspaceView `json:"items"`
	NextCursor *string         `json:"nextCursor" doc:"Opaque; null on the last page"`
}

// CreateWorkspaceRequest is the body of workspace creation.
type CreateWorkspaceRequest struct {
	Name  string `json:"name" example:"Acme Robotics"`
	Shard string `json:"shard,omitempty" doc:"Shard to place the workspace on; the default shard when omitted"`
}

// Validate checks the fields before any database work.
func (r *CreateWorkspaceRequest) Validate() error {
	r.Name = strings.TrimSpace(r.Name)
	if n := utf8.RuneCountInString(r.Name); n < 1 || n > 200 {
		return pmapi.Invalid("name", "name must be 1 to 200 characters")
	}
	return nil
}

// PlaceWorkspaceRequest moves a workspace's directory entry to a shard.
type PlaceWorkspaceRequest struct {
	Shard string `json:"shard"`
}

// Validate checks the fields before any database work.
func (r *PlaceWorkspaceRequest) Validate() error {
	if r.Shard == "" {
		return pmapi.Invalid("shard", "shard is required")
	}
	return nil
}

// UserView is a console user.
type UserView struct {
	ID          string    `json:"id" format:"uuid"`
	WorkspaceID string    `json:"workspaceId" format:"uuid"`
	Email       string    `json:"email"`
	Name        string    `json:"name"`
	CreatedAt   time.Time `json:"createdAt"`
}

// CreateUserRequest is the body of user creation.
type CreateUserRequest struct {
	Email string `json:"email" example:"ada@example.com"`
	Name  string `json:"name" example:"Ada Lovelace"`
}

// Validate checks the fields before any database work.
func (r *CreateUserRequest) Validate() error { return authz.ValidateUser(r.Email, r.Name) }

// IssueSessionRequest is the optional body of session issue.
type IssueSessionRequest struct {
	TTLSeconds int `json:"ttlSeconds,omitempty" doc:"Lifetime; default 30 days, at most 90 days"`
}

// Validate checks the fields before any database work.
func (r *IssueSessionRequest) Validate() error {
	if r.TTLSeconds < 0 || r.TTLSeconds > 90*24*3600 {
		return pmapi.Invalid("ttlSeconds", "ttlSeconds must be from 1 to 7776000")
	}
	return nil
}

// SessionIssued carries the sid value; it is shown here once and stored hashed.
type SessionIssued struct {
	SID       string    `json:"sid" doc:"Session cookie value; shown only in this response"`
	SessionID string    `json:"sessionId" format:"uuid"`
	UserID    string    `json:"userId" format:"uuid"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func workspaceView(w tenant.Workspace) WorkspaceView {
	return WorkspaceView{
		WorkspaceID: w.ID.String(), Name: w.Name, Status: w.Status, Shard: w.Shard,
		ConsoleClientID: w.ConsoleClientID, CreatedAt: w.CreatedAt, SuspendedAt: w.SuspendedAt,
	}
}

func userView(u authz.User) UserView {
	return UserView{
		ID:          u.ID.String(),
		WorkspaceID: u.WorkspaceID.String(),
		Email:       u.Email,
		Name:        u.Name,
		CreatedAt:   u.CreatedAt,
	}
}

func (s *Server) adminOperations() []Operation {
	const tag = "Operator admin"
	return []Operation{
		{Method: http.MethodPost, Path: "/admin/v1/workspaces", ID: "adminCreateWorkspace", Tag: tag, Auth: AuthAdmin,
			Summary: "Create a workspace and its console client", Body: CreateWorkspaceRequest{}, Result: WorkspaceView{},
			Status: http.StatusCreated, Handler: s.adminCreateWorkspace},
		{Method: http.MethodGet, Path: "/admin/v1/workspaces", ID: "adminListWorkspaces", Tag: tag, Auth: AuthAdmin,
			Summary: "List workspaces, oldest first", Query: ListQuery{}, Result: WorkspaceList{},
			Status: http.StatusOK, Handler: s.adminListWorkspaces},
		{
			Method:  http.MethodGet,
			Path:    "/admin/v1/workspaces/{workspaceId}",
			ID:      "adminGetWorkspace",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "One workspace",
			Result:  WorkspaceView{},
			Status:  http.StatusOK,
			Handler: s.adminGetWorkspace,
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/suspend",
			ID:      "adminSuspendWorkspace",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Suspend a workspace: its calls get 403 WORKSPACE_SUSPENDED",
			Result:  WorkspaceView{},
			Status:  http.StatusOK,
			Handler: s.adminSetStatus(tenant.StatusSuspended),
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/resume",
			ID:      "adminResumeWorkspace",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Resume a suspended workspace",
			Result:  WorkspaceView{},
			Status:  http.StatusOK,
			Handler: s.adminSetStatus(tenant.StatusActive),
		},
		{
			Method:  http.MethodPut,
			Path:    "/admin/v1/workspaces/{workspaceId}/shard",
			ID:      "adminPlaceWorkspace",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Place a workspace on a shard (refused while it has rows on its current shard)",
			Body:    PlaceWorkspaceRequest{},
			Result:  WorkspaceView{},
			Status:  http.StatusOK,
			Handler: s.adminPlaceWorkspace,
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/users",
			ID:      "adminCreateUser",
			Fails:   []pmapi.Code{pmapi.CodeConflict, pmapi.CodeWorkspaceSuspended},
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Create a console user in a workspace",
			Body:    CreateUserRequest{},
			Result:  UserView{},
			Status:  http.StatusCreated,
			Handler: s.adminCreateUser,
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/users/{userId}/sessions",
			ID:      "adminIssueSession",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Issue a console session for a user; returns the sid once",
			Body:    IssueSessionRequest{},
			Result:  SessionIssued{},
			Status:  http.StatusCreated,
			Handler: s.adminIssueSession,
		},
		s.adminRateLimitOperation(),
	}
}

func parseUUIDParam(c *fiber.Ctx, name, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params(name))
	if err != nil {
		return uuid.Nil, pmapi.NotFound(what)
	}
	return id, nil
}

func (s *Server) adminCreateWorkspace(c *fiber.Ctx) error {
	req, err := decodeBody[CreateWorkspaceRequest](c)
	if err != nil {
		return err
	}
	w, err := s.Directory.Create(c.UserContext(), req.Name, req.Shard)
	if err != nil {
		return err
	}
	return respond(c, http.StatusCreated, workspaceView(w))
}

func (s *Server) adminListWorkspaces(c *fiber.Ctx) error {
	return pageAfter(c, "workspaces", func(raw string, limit int) ([]tenant.Workspace, error) {
		var after *uuid.UUID
		if raw != "" {
			id, err := cursorID(raw)
			if err != nil {
				return nil, err
			}
			after = &id
		}
		return s.Directory.List(c.UserContext(), after, limit)
	}, func(w tenant.Workspace) string { return w.ID.String() }, workspaceView)
}

// onWorkspace answers the path's workspace as do leaves it.
func onWorkspace(c *fiber.Ctx, do func(ctx context.Context, id uuid.UUID) (tenant.Workspace, error)) error {
	id, err := parseUUIDParam(c, "workspaceId", "workspace")
	if err != nil {
		return err
	}
	w, err := do(c.UserContext(), id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, workspaceView(w))
}

func (s *Server) adminSetStatus(status string) fiber.Handler {
	action := audit.WorkspaceSuspended
	if status == tenant.StatusActive {
		action = audit.WorkspaceResumed
	}
	return func(c *fiber.Ctx) error {
		return onWorkspace(c, func(ctx context.Context, id uuid.UUID) (w tenant.Workspace, err error) {
			err = s.auditedDirectoryChange(ctx, id, action, func(ctx context.Context) (err error) {
				w, err = s.Directory.SetStatus(ctx, id, status)
				return err
			})
			return w, err
		})
	}
}

func (s *Server) adminPlaceWorkspace(c *fiber.Ctx) error {
	return onWorkspace(c, func(ctx context.Context, id uuid.UUID) (tenant.Workspace, error) {
		req, err := decodeBody[PlaceWorkspaceRequest](c)
		if err != nil {
			return tenant.Workspace{}, err
		}
		w, err := s.Directory.Place(ctx, id, req.Shard, authz.HasUsers)
		if err != nil {
			return w, err
		}
		// Recorded on the shard the workspace now lives on, once it is there.
		return w, s.recordOperatorAction(ctx, w, audit.WorkspacePlaced)
	})
}

// activeWorkspace loads the path's workspace and refuses a suspended one.
func (s *Server) activeWorkspace(c *fiber.Ctx) (tenant.Workspace, *tenant.Shard, error) {
	w, err := s.pathWorkspace(c)
	if err != nil {
		return w, nil, err
	}
	if w.Status == tenant.StatusSuspended {
		return w, nil, pmapi.Errorf(pmapi.CodeWorkspaceSuspended, "this workspace is suspended")
	}
	shard, err := s.Directory.ShardOf(w)
	return w, shard, err
}

func (s *Server) adminCreateUser(c *fiber.Ctx) error {
	w, shard, err := s.activeWorkspace(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[CreateUserRequest](c)
	if err != nil {
		return err
	}
	u, err := authz.InviteUser(c.UserContext(), s.Directory, shard, w.ID, req.Email, req.Name)
	if err != nil {
		return err
	}
	return respond(c, http.StatusCreated, userView(u))
}

func (s *Server) adminIssueSession(c *fiber.Ctx) error {
	w, shard, err := s.activeWorkspace(c)
	if err != nil {
		return err
	}
	userID, err := parseUUIDParam(c, "userId", "user")
	if err != nil {
		return err
	}
	req, err := decodeOptionalBody[IssueSessionRequest](c)
	if err != nil {
		return err
	}
	ttl := s.SessionTTL
	if req.TTLSeconds > 0 {
		ttl = time.Duration(req.TTLSeconds) * time.Second
	}
	sid, sess, err := authz.IssueSession(c.UserContext(), shard, w.ID, userID, ttl)
	if err != nil {
		return err
	}
	return createdOnce(c, SessionIssued{
		SID: sid, SessionID: sess.ID.String(), UserID: userID.String(), CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt,
	})
}

// RateLimitRequest sets or clears an app's per-key rate limit. The field has
// the name the app's view gives it; perMinute, its name in 0.1.0, is still
// taken (docs/decisions/admin.md).
type RateLimitRequest struct {
	RateLimitPerMinute *int `json:"rateLimitPerMinute,omitempty" doc:"Requests per minute per credential of the app; null or absent restores the server default"`
	PerMinute          *int `json:"perMinute,omitempty" deprecated:"true" doc:"Deprecated: the earlier name of rateLimitPerMinute, still accepted"`
}

// Validate refuses the two names with different values.
func (r *RateLimitRequest) Validate() error {
	if r.RateLimitPerMinute != nil && r.PerMinute != nil && *r.RateLimitPerMinute != *r.PerMinute {
		return pmapi.Invalid("perMinute", "perMinute is the deprecated name of rateLimitPerMinute; give one of them")
	}
	if r.RateLimitPerMinute == nil {
		r.RateLimitPerMinute = r.PerMinute
	}
	return nil
}

func (s *Server) adminRateLimitOperation() Operation {
	return Operation{
		Method:  http.MethodPut,
		Path:    "/admin/v1/workspaces/{workspaceId}/apps/{clientId}/rate-limit",
		ID:      "adminSetAppRateLimit",
		Tag:     "Operator admin",
		Auth:    AuthAdmin,
		Summary: "Override the per-key rate limit of one app",
		Body:    RateLimitRequest{},
		Result:  AppView{},
		Status:  http.StatusOK,
		Handler: s.adminSetRateLimit,
	}
}

func (s *Server) adminSetRateLimit(c *fiber.Ctx) error {
	id, err := parseUUIDParam(c, "workspaceId", "workspace")
	if err != nil {
		return err
	}
	req, err := decodeBody[RateLimitRequest](c)
	if err != nil {
		return err
	}
	w, err := s.Directory.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	shard, err := s.Directory.ShardOf(w)
	if err != nil {
		return err
	}
	app, err := authz.SetRateLimit(c.UserContext(), shard, w.ID, c.Params("clientId"), req.RateLimitPerMinute)
	if err != nil {
		return err
	}
	s.Auth.Invalidate(tenant.ClientChanged(app.ClientID))
	return respond(c, http.StatusOK, appView(app))
}
