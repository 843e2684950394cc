package project

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/facet"
	"github.com/pmapi/pmapi/tenant"
)

// The scopes of projects.
const (
	ScopeRead  = "projects:read"
	ScopeWrite = "projects:write"
)

// Resource registers projects with the server. A project delete removes the
// rows of every registered cascade (Catalog.Cascade).
func Resource(s Store) api.Resource {
	return api.Resource{
		Name: "project", Scopes: []string{ScopeRead, ScopeWrite}, Tables: []string{"projects", "project_members"},
		Events: EventTypes(), Search: []facet.Search{SearchSource},
		Operations: func(cat api.Catalog) []api.Operation {
			s.Children = cat.Cascade
			return handlers{s}.operations()
		},
	}
}

// ListQuery documents and decodes the project list's parameters.
type ListQuery struct {
	api.ListQuery
	RAGStatus       string     `query:"ragStatus" enum:"GREEN,AMBER,RED"`
	OwnerID         *uuid.UUID `query:"ownerId" format:"uuid"`
	Q               string     `query:"q" doc:"Case-insensitive substring of the name"`
	IncludeArchived bool       `query:"includeArchived" doc:"Include archived projects; default false"`
}

// DetailQuery names one project.
type DetailQuery struct {
	ID string `query:"id" required:"true" doc:"Project id (prj_...)"`
}

// MembersQuery names the project whose members to list.
type MembersQuery struct {
	ProjectID string `query:"projectId" required:"true"`
}

// Members lists a project's members.
type Members struct {
	ProjectID string   `json:"projectId"`
	Items     []Member `json:"items"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (Members) SchemaName() string { return "ProjectMembers" }

type handlers struct{ projects Store }

func (h handlers) operations() []api.Operation {
	const tag, base = "Projects", "/openapi/v1/resource/project/"
	read, write := ScopeRead, ScopeWrite
	return []api.Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listProjects", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Projects, newest first", Query: ListQuery{}, Result: List{}, Status: http.StatusOK, Handler: h.list},
		{Method: http.MethodGet, Path: base + "detail", ID: "getProject", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "One project with its members", Query: DetailQuery{}, Result: View{}, Status: http.StatusOK, Handler: api.Detail(ParseID, h.projects.Get, ToView)},
		{Method: http.MethodPost, Path: base + "create", ID: "createProject", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Create a project (emits project.created)", Body: CreateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: api.Write(parseCreate, h.projects.Create, ToView)},
		{Method: http.MethodPost, Path: base + "update", ID: "updateProject", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Change a project's fields (emits project.updated)", Body: UpdateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: api.Write(parseChange, h.update, ToView)},
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveProject", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Archive a project: it leaves lists unless includeArchived=true", Body: IDRequest{}, Result: View{}, Status: http.StatusCreated,
			Handler: h.archive(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreProject", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Restore an archived project", Body: IDRequest{}, Result: View{}, Status: http.StatusCreated,
			Handler: h.archive(false)},
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteProject", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Delete an archived project and everything in it, for good (409 if not archived)", Body: IDRequest{}, Result: Deleted{},
			Status: http.StatusCreated, Handler: h.delete},
		{Method: http.MethodGet, Path: base + "members", ID: "listProjectMembers", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "A project's members", Query: MembersQuery{}, Result: Members{}, Status: http.StatusOK, Handler: h.members},
		{Method: http.MethodPost, Path: base + "member/add", ID: "addProjectMember", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a member (emits project.member_added)", Body: MemberRequest{}, Result: View{}, Status: http.StatusCreated,
			Handler: h.addMember},
		{Method: http.MethodPost, Path: base + "member/remove", ID: "removeProjectMember", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Remove a member (emits project.member_removed)", Body: MemberRequest{}, Result: View{}, Status: http.StatusCreated,
			Handler: h.removeMember},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	before, err := q.Before("projects")
	if err != nil {
		return err
	}
	f := Filter{RAGStatus: q.RAGStatus, OwnerID: q.OwnerID, Q: q.Q, IncludeArchived: q.IncludeArchived, Before: before, Limit: q.Limit + 1}
	shard, ws := api.Tenant(c)
	items, err := h.projects.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := List{}
	page.Items, page.NextCursor = api.Page("projects", items, q.Limit, func(p Project) uuid.UUID { return p.ID }, ToView)
	return api.Respond(c, http.StatusOK, page)
}

type change struct {
	id uuid.UUID
	f  Fields
}

func parseCreate(req CreateRequest, _ func(string) bool) (NewProject, error) { return ParseCreate(req) }

func parseChange(req UpdateRequest, has func(string) bool) (change, error) {
	id, f, err := ParseUpdate(req, has)
	return change{id, f}, err
}

func parseIDRequest(req IDRequest, _ func(string) bool) (uuid.UUID, error) { return ParseID(req.ID) }

func (h handlers) update(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in change) (Project, error) {
	return h.projects.Update(ctx, shard, ws, in.id, in.f)
}

func (h handlers) archive(archived bool) fiber.Handler {
	return api.Write(parseIDRequest, func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Project, error) {
		return h.projects.SetArchived(ctx, shard, ws, id, archived)
	}, ToView)
}

func (h handlers) delete(c *fiber.Ctx) error {
	req, err := api.DecodeBody[IDRequest](c)
	if err != nil {
		return err
	}
	id, err := ParseID(req.ID)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	counts, err := h.projects.Delete(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return api.Created(c, Deleted{ID: req.ID, Deleted: true, Cascaded: counts})
}

func (h handlers) members(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[MembersQuery](c)
	if err != nil {
		return err
	}
	id, err := ParseID(q.ProjectID)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	v := ToView(p)
	return api.Respond(c, http.StatusOK, Members{ProjectID: v.ID, Items: v.Members})
}

func (h handlers) addMember(c *fiber.Ctx) error {
	req, err := api.DecodeBody[MemberRequest](c)
	if err != nil {
		return err
	}
	pid, uid, err := ParseMember(req)
	if err != nil {
		return err
	}
	role, err := MemberRole(req)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.AddMember(c.UserContext(), shard, ws, pid, uid, role)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(p))
}

func (h handlers) removeMember(c *fiber.Ctx) error {
	req, err := api.DecodeBody[MemberRequest](c)
	if err != nil {
		return err
	}
	pid, uid, err := ParseMember(req)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.RemoveMember(c.UserContext(), shard, ws, pid, uid)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(p))
}
