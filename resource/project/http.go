package project

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
)

// routes are the projects' operations.
var routes = route.For("project", "projects", "Projects")

// Resource registers projects with the server. A project delete removes the
// rows of every registered cascade (Catalog.Cascade).
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"projects", "project_members"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		TagDoc: "Projects: the container of tasks, risks, notes and analyses, " +
			"with members and a RAG status; archive, restore, and delete (permanent, archived projects only).",
	}, func(cat api.Catalog) []api.Operation {
		s.Children = cat.Cascade
		return handlers{s}.operations(cat)
	})
}

// ListQuery documents and decodes the project list's parameters.
type ListQuery struct {
	api.ListQuery
	api.SyncQuery
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
			Summary: "Projects, newest first",
			Query:   ListQuery{}, Result: List{}, Handler: h.list},
		{Method: http.MethodGet, Path: "detail", ID: "getProject",
			Summary: "One project with its members",
			Query:   DetailQuery{}, Result: View{}, Handler: route.Get(route.InQuery(ParseID), h.projects.Get, ToView)},
		{Method: http.MethodPost, Path: "create", ID: "createProject", Idempotent: true,
			Summary: "Create a project (emits project.created)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Create(ParseCreate, h.projects.Create, ToView)},
		{Method: http.MethodPost, Path: "update", ID: "updateProject", IfMatch: true,
			Summary: "Change a project's fields (emits project.updated)",
			Body:    UpdateRequest{}, Result: View{}, Handler: route.Update(ParseUpdate, h.projects.Update, ToView)},
		{Method: http.MethodPost, Path: "archive", ID: "archiveProject", IfMatch: true,
			Summary: "Archive a project: it leaves lists unless includeArchived=true",
			Body:    IDRequest{}, Result: View{}, Handler: route.Archive(projectID, h.projects.SetArchived, ToView, true)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreProject", IfMatch: true,
			Summary: "Restore an archived project",
			Body:    IDRequest{}, Result: View{}, Handler: route.Archive(projectID, h.projects.SetArchived, ToView, false)},
		{Method: http.MethodPost, Path: "delete", ID: "deleteProject", Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Delete an archived project and everything in it, for good (409 if not archived)",
			Body:    IDRequest{}, Result: Deleted{}, Handler: h.delete},
		{Method: http.MethodGet, Path: "members", ID: "listProjectMembers",
			Summary: "A project's members",
			Query:   MembersQuery{}, Result: Members{}, Handler: h.members},
		{Method: http.MethodPost, Path: "member/add", ID: "addProjectMember", Idempotent: true,
			Summary: "Add a member (emits project.member_added)",
			Body:    MemberRequest{}, Result: View{}, Handler: h.addMember},
		{Method: http.MethodPost, Path: "member/remove", ID: "removeProjectMember",
			Summary: "Remove a member (emits project.member_removed)",
			Body:    MemberRequest{}, Result: View{}, Handler: h.removeMember},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, k, err := api.DecodeSync[ListQuery](c, "projects")
	if err != nil {
		return err
	}
	f := Filter{RAGStatus: q.RAGStatus, OwnerID: q.OwnerID, Q: q.Q, IncludeArchived: q.IncludeArchived,
		Page: k, Limit: q.Limit + 1}
	shard, ws := api.Tenant(c)
	projects, err := h.projects.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	projects, next := api.PageSorted("projects", k, projects, q.Limit, func(p Project) uuid.UUID { return p.ID },
		func(p Project) time.Time { return p.UpdatedAt })
	return api.OK(c, List{Items: api.Views(projects, ToView), NextCursor: next})
}

// view reads the project the id s names (a malformed one is not found) and
// makes its view: the members route's project.
func (h handlers) view(c *fiber.Ctx, s string) (View, error) {
	id, err := ParseID(s)
	if err != nil {
		return View{}, err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return View{}, err
	}
	return ToView(p), nil
}

// projectID reads the project an archive or restore body names.
var projectID = route.InBody(func(r IDRequest) string { return r.ID }, ParseID)

// delete removes an archived project with everything in it, answering with
// the id as the body gave it and how many rows of each kind went.
func (h handlers) delete(c *fiber.Ctx) error {
	id, given, err := decodeID(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	counts, err := h.projects.Delete(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return api.Created(c, Deleted{ID: given, Deleted: true, Cascaded: counts})
}

// decodeID reads the project a delete body names, and its id as given.
func decodeID(c *fiber.Ctx) (uuid.UUID, string, error) {
	req, err := api.DecodeBody[IDRequest](c)
	if err != nil {
		return uuid.Nil, "", err
	}
	id, err := ParseID(req.ID)
	return id, req.ID, err
}

// members answers a page of the members of the project the query names.
func (h handlers) members(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[MembersQuery](c)
	if err != nil {
		return err
	}
	v, err := h.view(c, q.ProjectID)
	if err != nil {
		return err
	}
	members, next, err := api.PageIn(c, "project-members", v.Members, memberKey)
	if err != nil {
		return err
	}
	return api.OK(c, Members{ProjectID: v.ID, Items: members, NextCursor: next})
}

func (h handlers) addMember(c *fiber.Ctx) error {
	req, id, user, err := decodeMember(c)
	if err != nil {
		return err
	}
	role, err := MemberRole(req)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.AddMember(c.UserContext(), shard, ws, id, user, role)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(p))
}

func (h handlers) removeMember(c *fiber.Ctx) error {
	_, id, user, err := decodeMember(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	p, err := h.projects.RemoveMember(c.UserContext(), shard, ws, id, user)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(p))
}

func memberKey(m Member) string { return m.UserID.String() }

// decodeMember reads the project and the user a member body names.
func decodeMember(c *fiber.Ctx) (req MemberRequest, id, user uuid.UUID, err error) {
	if req, err = api.DecodeBody[MemberRequest](c); err != nil {
		return req, id, user, err
	}
	id, user, err = ParseMember(req)
	return req, id, user, err
}
