package api

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// AppView is an app as its workspace's console sees it; the secret never appears.
type AppView struct {
	ClientID           string     `json:"clientId" doc:"Public; never changes" example:"pm_cli_4Yq0cJ2bW8rT1mN6pK3s"`
	Name               string     `json:"name" example:"Jira sync"`
	Description        *string    `json:"description"`
	Scopes             []string   `json:"scopes" doc:"The most a key of this app may be granted" example:"[\"projects:read\",\"tasks:read\",\"tasks:write\"]"`
	Status             string     `json:"status" enum:"ACTIVE,DISABLED"`
	SecretPrefix       string     `json:"secretPrefix" doc:"First 12 characters of the secret, to recognise it" example:"pm_sec_Q8vZ2"`
	RateLimitPerMinute *int       `json:"rateLimitPerMinute" doc:"Operator override of the per-key rate limit; null for the default"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	DisabledAt         *time.Time `json:"disabledAt"`
}

// AppCreated is AppView plus the secret, returned by creation only.
type AppCreated struct {
	AppView
	Secret string `json:"secret" doc:"Shown only in this response; stored hashed" example:"pm_sec_Q8vZ2kT4nB7xW1mL5rC9pH3sJ6dF0yG2aE8uN4qV"`
}

// AppList is a page of apps.
type AppList PageOf[AppView]

// CreateAppRequest is the body of app creation.
type CreateAppRequest struct {
	WorkspaceID string   `json:"workspaceId" doc:"Must be the signed-in user's workspace"`
	Name        string   `json:"name" example:"Jira sync"`
	Description *string  `json:"description,omitempty" example:"Mirrors tasks into Jira"`
	Scopes      []string `json:"scopes" example:"[\"projects:read\",\"tasks:write\"]"`
}

// UpdateAppRequest changes an app; absent fields stay, `description: null` clears.
type UpdateAppRequest struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	Status      *string `json:"status,omitempty" enum:"ACTIVE,DISABLED" doc:"DISABLED stops every credential of the app with 403 APP_DISABLED; ACTIVE re-enables"`
}

// ScopesRequest replaces an app's declared scopes.
type ScopesRequest struct {
	Scopes []string `json:"scopes" example:"[\"projects:read\",\"tasks:read\",\"tasks:write\"]"`
}

// AppDeleted says whether the app was removed or, still having active keys,
// webhooks or OAuth grants, disabled.
type AppDeleted struct {
	ClientID string `json:"clientId"`
	Deleted  bool   `json:"deleted" doc:"true: removed (404 afterwards); false: disabled instead"`
	Status   string `json:"status" enum:"DELETED,DISABLED"`
}

// AppSecretRotated carries an app's new secret, shown once.
type AppSecretRotated struct {
	ClientID     string `json:"clientId"`
	Secret       string `json:"secret" doc:"Shown only in this response; the old secret stops at once"`
	SecretPrefix string `json:"secretPrefix"`
}

func appView(a authz.App) AppView {
	return AppView{
		ClientID: a.ClientID, Name: a.Name, Description: a.Description, Scopes: a.Scopes.Names(), Status: a.Status,
		SecretPrefix: a.SecretPrefix, RateLimitPerMinute: a.RateLimitPerMinute,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, DisabledAt: a.DisabledAt,
	}
}

func (s *Server) appOperations() []Operation {
	const tag = "Apps"
	return []Operation{
		{
			Method:      http.MethodPost,
			Path:        "/openapi/v1/apps",
			ID:          "createApp",
			Fails:       []pmapi.Code{pmapi.CodeForbidden, pmapi.CodeScopeNotAllowed, pmapi.CodeQuotaExceeded},
			Tag:         tag,
			Auth:        AuthSession,
			Idempotent:  true,
			SecretField: "secret",
			Summary:     "Register an app; returns its secret once",
			Body:        CreateAppRequest{},
			Result:      AppCreated{},
			Status:      http.StatusCreated,
			Handler:     s.createApp,
		},
		{Method: http.MethodGet, Path: "/openapi/v1/apps", ID: "listApps", Tag: tag, Auth: AuthSession,
			Summary: "The workspace's apps", Query: ListQuery{}, Result: AppList{}, Status: http.StatusOK, Handler: s.listApps},
		{Method: http.MethodGet, Path: "/openapi/v1/apps/{clientId}", ID: "getApp", Tag: tag, Auth: AuthSession,
			Summary: "One app", Result: AppView{}, Status: http.StatusOK, Handler: s.getApp},
		{Method: http.MethodPatch, Path: "/openapi/v1/apps/{clientId}", ID: "updateApp", Tag: tag, Auth: AuthSession,
			IfMatch: true, Summary: "Change an app's name, description or status", Body: UpdateAppRequest{},
			Result: AppView{}, Status: http.StatusOK, Handler: s.updateApp},
		{Method: http.MethodDelete, Path: "/openapi/v1/apps/{clientId}", ID: "deleteApp", Tag: tag, Auth: AuthSession,
			Summary: "Delete an app, or disable it while it has active keys, webhooks or OAuth grants", Result: AppDeleted{},
			Status: http.StatusOK, Handler: s.deleteApp},
		{
			Method:  http.MethodPatch,
			Path:    "/openapi/v1/apps/{clientId}/scopes",
			ID:      "setAppScopes",
			IfMatch: true,
			Fails:   []pmapi.Code{pmapi.CodeScopeNotAllowed},
			Tag:     tag,
			Auth:    AuthSession,
			Summary: "Replace the app's declared scopes (keys keep theirs, limited to these)",
			Body:    ScopesRequest{},
			Result:  AppView{},
			Status:  http.StatusOK,
			Handler: s.setAppScopes,
		},
		{
			Method:      http.MethodPost,
			Path:        "/openapi/v1/apps/{clientId}/secret/rotate",
			ID:          "rotateAppSecret",
			Tag:         tag,
			Auth:        AuthSession,
			SecretField: "secret",
			Summary:     "Replace the app's secret; the new one is returned once",
			Result:      AppSecretRotated{},
			Status:      http.StatusCreated,
			Handler:     s.rotateAppSecret,
		},
	}
}

func (s *Server) createApp(c *fiber.Ctx) error {
	req, err := decodeBody[CreateAppRequest](c)
	if err != nil {
		return err
	}
	res := resolutionOf(c)
	if req.WorkspaceID == "" {
		return pmapi.Invalid("workspaceId", "workspaceId is required")
	}
	// Another workspace is one the caller cannot see: 404, as for any id of
	// another workspace (DESIGN.md section 3), whether or not it exists.
	if ws, err := uuid.Parse(req.WorkspaceID); err != nil || ws != res.Workspace.ID {
		return pmapi.NotFound("workspace").With("field", "workspaceId")
	}
	name, err := authz.ValidateName(req.Name)
	if err != nil {
		return err
	}
	if err := authz.ValidateAppDescription(req.Description); err != nil {
		return err
	}
	scopes, err := requiredScopes(req.Scopes, "scopes is required (it may be empty)")
	if err != nil {
		return err
	}
	app, secret, err := authz.CreateApp(c.UserContext(), s.Directory, res.Shard, res.Workspace.ID,
		authz.NewApp{Name: name, Description: req.Description, Scopes: scopes, CreatedBy: userOf(c).ID})
	if err != nil {
		return err
	}
	return createdOnce(c, AppCreated{AppView: appView(app), Secret: secret})
}

// requiredScopes reads a body's scopes, which must be given (missing says
// so), an empty list being one.
func requiredScopes(scopes []string, missing string) (authz.Scopes, error) {
	if scopes == nil {
		return 0, pmapi.Invalid("scopes", "%s", missing)
	}
	return authz.ParseScopes("scopes", scopes)
}

// createdOnce answers 201 with a secret shown in this answer only: no cache
// may keep it.
func createdOnce(c *fiber.Ctx, data any) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return respond(c, http.StatusCreated, data)
}

func (s *Server) listApps(c *fiber.Ctx) error {
	res := resolutionOf(c)
	return pageAfter(c, "apps", func(after string, limit int) ([]authz.App, error) {
		return authz.ListApps(c.UserContext(), res.Shard, res.Workspace.ID, after, limit)
	}, func(a authz.App) string { return a.ClientID }, appView)
}

func (s *Server) getApp(c *fiber.Ctx) error {
	res := resolutionOf(c)
	app, err := authz.GetApp(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"))
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, appView(app))
}

func (s *Server) updateApp(c *fiber.Ctx) error {
	req, err := decodeBody[UpdateAppRequest](c)
	if err != nil {
		return err
	}
	var patch authz.AppPatch
	if req.Name != nil {
		name, err := authz.ValidateName(*req.Name)
		if err != nil {
			return err
		}
		patch.Name = &name
	}
	if bodyHas(c, "description") {
		if err := authz.ValidateAppDescription(req.Description); err != nil {
			return err
		}
		patch.Description = &req.Description
	}
	if req.Status != nil {
		if *req.Status != authz.AppActive && *req.Status != authz.AppDisabled {
			return pmapi.Invalid("status", "status must be ACTIVE or DISABLED")
		}
		patch.Status = req.Status
	}
	return s.patchApp(c, patch)
}

func (s *Server) setAppScopes(c *fiber.Ctx) error {
	req, err := decodeBody[ScopesRequest](c)
	if err != nil {
		return err
	}
	scopes, err := requiredScopes(req.Scopes, "scopes is required (it may be empty)")
	if err != nil {
		return err
	}
	return s.patchApp(c, authz.AppPatch{Scopes: &scopes})
}

// patchApp applies patch to the path's app; this instance forgets the client
// before answering, others hear the notification committed with the change.
func (s *Server) patchApp(c *fiber.Ctx, patch authz.AppPatch) error {
	res := resolutionOf(c)
	ctx := c.UserContext()
	patch.Check = func(cur authz.App) error { return ifMatchApp(ctx, cur.ClientID, appView(cur)) }
	app, err := authz.UpdateApp(ctx, res.Shard, res.Workspace.ID, c.Params("clientId"), patch)
	if err != nil {
		return err
	}
	s.Auth.Invalidate(tenant.ClientChanged(app.ClientID))
	return respond(c, http.StatusOK, appView(app))
}

func (s *Server) deleteApp(c *fiber.Ctx) error {
	res := resolutionOf(c)
	clientID := c.Params("clientId")
	_, removed, err := authz.DeleteApp(
		c.UserContext(),
		s.Directory,
		res.Shard,
		res.Workspace.ID,
		clientID,
		s.catalog.AppInUse...)
	if err != nil {
		return err
	}
	s.Auth.Invalidate(tenant.ClientChanged(clientID))
	out := AppDeleted{ClientID: clientID, Deleted: removed, Status: "DELETED"}
	if !removed {
		out.Status = authz.AppDisabled
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) rotateAppSecret(c *fiber.Ctx) error {
	res := resolutionOf(c)
	app, secret, err := authz.RotateAppSecret(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"))
	if err != nil {
		return err
	}
	return createdOnce(c, AppSecretRotated{ClientID: app.ClientID, Secret: secret, SecretPrefix: app.SecretPrefix})
}
