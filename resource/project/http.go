package project

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/tenant"
)

// routes are the projects' operations.
var routes = route.For("project", "projects", "Projects")

// Resource registers projects with the server. A project delete removes the
// rows of every registered cascade (Catalog.Cascade).
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"projects", "project_members"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		TagDoc: "Projects: the container of tasks, risks, notes and analyses, with members and a RAG status; archive, restore, and delete (permanent, archived projects only).",
	}, func(cat api.Catalog) []api.Operation {
		s.Children = cat.Cascade
		return handlers{s}.operations(cat)
	})
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
	api.ListQuery
	ProjectID string `query:"projectId" required:"true"`
}

// Members is a page of a project's members.
type Members struct {
	ProjectID  string   `json:"projectId"`
	Items      []Member `json:"items"`
	NextCursor *string  `json:"nextCursor"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (Members) SchemaName() string { return "ProjectMembers" }

type handlers struct{ projects Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listProjects",
			Summary: "Projects, newest first", Query: ListQuery{}, Result: List{}, Handler: api.List("projects", listFilter, h.projects.List, func(p Project) uuid.UUID { return p.ID }, ToView)},
		{Method: http.MethodGet, Path: "detail", ID: "getProject",
			Summary: "One project with its members", Query: DetailQuery{}, Result: View{}, Handler: api.Detail(ParseID, h.projects.Get, ToView)},
		{Method: http.MethodPost, Path: "create", ID: "createProject", Idempotent: true,
			Summary: "Create a project (emits project.created)", Body: CreateRequest{}, Result: View{}, Handler: api.Write(parseCreate, h.projects.Create, ToView)},
		{Method: http.MethodPost, Path: "update", ID: "updateProject",
			Summary: "Change a project's fields (emits project.updated)", Body: UpdateRequest{}, Result: View{}, Handler: api.WriteOn(ParseUpdate, h.projects.Update, ToView)},
		{Method: http.MethodPost, Path: "archive", ID: "archiveProject",
			Summary: "Archive a project: it leaves lists unless includeArchived=true", Body: IDRequest{}, Result: View{},
			Handler: api.Write(parseIDRequest, api.With(true, h.projects.SetArchived), ToView)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreProject",
			Summary: "Restore an archived project", Body: IDRequest{}, Result: View{},
			Handler: api.Write(parseIDRequest, api.With(false, h.projects.SetArchived), ToView)},
		{Method: http.MethodPost, Path: "delete", ID: "deleteProject", Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Delete an archived project and everything in it, for good (409 if not archived)", Body: IDRequest{}, Result: Deleted{},
			Handler: api.Write(parseDelete, h.delete, api.AsIs)},
		{Method: http.MethodGet, Path: "members", ID: "listProjectMembers",
			Summary: "A project's members", Query: MembersQuery{}, Result: Members{}, Handler: h.members},
		{Method: http.MethodPost, Path: "member/add", ID: "addProjectMember", Idempotent: true,
			Summary: "Add a member (emits project.member_added)", Body: MemberRequest{}, Result: View{},
			Handler: api.Write(parseAddMember, h.addMember, ToView)},
		{Method: http.MethodPost, Path: "member/remove", ID: "removeProjectMember",
			Summary: "Remove a member (emits project.member_removed)", Body: MemberRequest{}, Result: View{},
			Handler: api.Write(parseMember, api.On(h.projects.RemoveMember), ToView)},
	}
}

func listFilter(q ListQuery, before *uuid.UUID, limit int) Filter {
	return Filter{RAGStatus: q.RAGStatus, OwnerID: q.OwnerID, Q: q.Q, IncludeArchived: q.IncludeArchived, Before: before, Limit: limit}
}

func parseCreate(req CreateRequest, _ func(string) bool) (NewProject, error) { return ParseCreate(req) }

func parseIDRequest(req IDRequest, _ func(string) bool) (uuid.UUID, error) { return ParseID(req.ID) }

func parseDelete(req IDRequest, _ func(string) bool) (api.Named, error) {
	return api.Name(ParseID, req.ID)
}

func (h handlers) delete(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, p api.Named) (Deleted, error) {
	counts, err := h.projects.Delete(ctx, shard, ws, p.ID)
	return Deleted{ID: p.Given, Deleted: true, Cascaded: counts}, err
}

func readMembersQuery(c *fiber.Ctx) (uuid.UUID, error) {
	q, err := api.DecodeQuery[MembersQuery](c)
	if err != nil {
		return uuid.Nil, err
	}
	return ParseID(q.ProjectID)
}

func (h handlers) members(c *fiber.Ctx) error {
	id, err := readMembersQuery(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	v := ToView(p)
	page, err := api.PageIn(c, "project-members", v.Members, func(m Member) string { return m.UserID.String() }, api.AsIs[Member])
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, Members{ProjectID: v.ID, Items: page.Items, NextCursor: page.NextCursor})
}

func parseMember(req MemberRequest, _ func(string) bool) (api.Target[uuid.UUID], error) {
	pid, uid, err := ParseMember(req)
	return api.Target[uuid.UUID]{ID: pid, Change: uid}, err
}

type member struct {
	api.Target[uuid.UUID]
	role string
}

func parseAddMember(req MemberRequest, has func(string) bool) (member, error) {
	m, err := parseMember(req, has)
	if err != nil {
		return member{}, err
	}
	role, err := MemberRole(req)
	return member{m, role}, err
}

func (h handlers) addMember(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, m member) (Project, error) {
	return h.projects.AddMember(ctx, shard, ws, m.ID, m.Change, m.role)
}
