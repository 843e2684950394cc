package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/project"
)

// ProjectListQuery documents the project list's parameters.
type ProjectListQuery struct {
	ListQuery
	RAGStatus       string `query:"ragStatus" enum:"GREEN,AMBER,RED"`
	OwnerID         string `query:"ownerId" format:"uuid"`
	Q               string `query:"q" doc:"Case-insensitive substring of the name"`
	IncludeArchived bool   `query:"includeArchived" doc:"Include archived projects; default false"`
}

// ProjectDetailQuery names one project.
type ProjectDetailQuery struct {
	ID string `query:"id" required:"true" doc:"Project id (prj_...)"`
}

// ProjectMembersQuery names the project whose members to list.
type ProjectMembersQuery struct {
	ProjectID string `query:"projectId" required:"true"`
}

// ProjectMembers lists a project's members.
type ProjectMembers struct {
	ProjectID string           `json:"projectId"`
	Items     []project.Member `json:"items"`
}

func (s *Server) projectOperations() []Operation {
	const tag, base = "Projects", "/openapi/v1/resource/project/"
	read, write := "projects:read", "projects:write"
	return []Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listProjects", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Projects, newest first", Query: ProjectListQuery{}, Result: project.List{}, Status: http.StatusOK, Handler: s.listProjects},
		{Method: http.MethodGet, Path: base + "detail", ID: "getProject", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One project with its members", Query: ProjectDetailQuery{}, Result: project.View{}, Status: http.StatusOK, Handler: s.getProject},
		{Method: http.MethodPost, Path: base + "create", ID: "createProject", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Create a project (emits project.created)", Body: project.CreateRequest{}, Result: project.View{}, Status: http.StatusCreated, Handler: s.createProject},
		{Method: http.MethodPost, Path: base + "update", ID: "updateProject", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Change a project's fields (emits project.updated)", Body: project.UpdateRequest{}, Result: project.View{}, Status: http.StatusCreated, Handler: s.updateProject},
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveProject", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Archive a project: it leaves lists unless includeArchived=true", Body: project.IDRequest{}, Result: project.View{}, Status: http.StatusCreated,
			Handler: s.archiveProject(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreProject", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Restore an archived project", Body: project.IDRequest{}, Result: project.View{}, Status: http.StatusCreated,
			Handler: s.archiveProject(false)},
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteProject", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Delete an archived project and everything in it, for good (409 if not archived)", Body: project.IDRequest{}, Result: project.Deleted{},
			Status: http.StatusCreated, Handler: s.deleteProject},
		{Method: http.MethodGet, Path: base + "members", ID: "listProjectMembers", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "A project's members", Query: ProjectMembersQuery{}, Result: ProjectMembers{}, Status: http.StatusOK, Handler: s.listProjectMembers},
		{Method: http.MethodPost, Path: base + "member/add", ID: "addProjectMember", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a member (emits project.member_added)", Body: project.MemberRequest{}, Result: project.View{}, Status: http.StatusCreated,
			Handler: s.addProjectMember},
		{Method: http.MethodPost, Path: base + "member/remove", ID: "removeProjectMember", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Remove a member (emits project.member_removed)", Body: project.MemberRequest{}, Result: project.View{}, Status: http.StatusCreated,
			Handler: s.removeProjectMember},
	}
}

func (s *Server) listProjects(c *fiber.Ctx) error {
	var f project.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.RAGStatus, err = queryEnum(c, "ragStatus", project.Green, project.Amber, project.Red); err != nil {
		return err
	}
	if f.OwnerID, err = queryUser(c, "ownerId"); err != nil {
		return err
	}
	if f.IncludeArchived, err = queryBool(c, "includeArchived"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "projects"); err != nil {
		return err
	}
	f.Q = c.Query("q")
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, err := s.projects.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := project.List{Items: []project.View{}, NextCursor: nextCursor("projects", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, p := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, project.ToView(p))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) getProject(c *fiber.Ctx) error {
	id, err := project.ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, project.ToView(p))
}

func (s *Server) createProject(c *fiber.Ctx) error {
	req, err := decodeBody[project.CreateRequest](c)
	if err != nil {
		return err
	}
	in := project.NewProject{Description: req.Description, RAGStatus: project.Green, StartDate: req.StartDate, TargetDate: req.TargetDate}
	if in.Name, err = project.ValidName(req.Name); err != nil {
		return err
	}
	if err := project.ValidDescription(req.Description); err != nil {
		return err
	}
	if req.RAGStatus != "" {
		if err := project.ValidRAG("ragStatus", req.RAGStatus); err != nil {
			return err
		}
		in.RAGStatus = req.RAGStatus
	}
	if err := project.ValidDates(req.StartDate, req.TargetDate); err != nil {
		return err
	}
	if in.OwnerID, err = optionalUser("ownerId", req.OwnerID); err != nil {
		return err
	}
	for _, m := range req.MemberIDs {
		id, err := project.ParseUserID("memberIds", m)
		if err != nil {
			return err
		}
		in.MemberIDs = append(in.MemberIDs, id)
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return created(c, project.ToView(p))
}

func (s *Server) updateProject(c *fiber.Ctx) error {
	req, err := decodeBody[project.UpdateRequest](c)
	if err != nil {
		return err
	}
	id, err := project.ParseID(req.ID)
	if err != nil {
		return err
	}
	var f project.Fields
	if req.Name != nil {
		name, err := project.ValidName(*req.Name)
		if err != nil {
			return err
		}
		f.Name = &name
	}
	if bodyHas(c, "description") {
		if err := project.ValidDescription(req.Description); err != nil {
			return err
		}
		f.Description = &req.Description
	}
	if bodyHas(c, "ownerId") {
		owner, err := optionalUser("ownerId", req.OwnerID)
		if err != nil {
			return err
		}
		f.OwnerID = &owner
	}
	if req.RAGStatus != nil {
		if err := project.ValidRAG("ragStatus", *req.RAGStatus); err != nil {
			return err
		}
		f.RAGStatus = req.RAGStatus
	} else if bodyHas(c, "ragStatus") {
		return pmapi.Invalid("ragStatus", "ragStatus cannot be null")
	}
	if bodyHas(c, "startDate") {
		f.StartDate = &req.StartDate
	}
	if bodyHas(c, "targetDate") {
		f.TargetDate = &req.TargetDate
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.Update(c.UserContext(), shard, ws, id, f)
	if err != nil {
		return err
	}
	return created(c, project.ToView(p))
}

func (s *Server) archiveProject(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := decodeBody[project.IDRequest](c)
		if err != nil {
			return err
		}
		id, err := project.ParseID(req.ID)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		p, err := s.projects.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return created(c, project.ToView(p))
	}
}

func (s *Server) deleteProject(c *fiber.Ctx) error {
	req, err := decodeBody[project.IDRequest](c)
	if err != nil {
		return err
	}
	id, err := project.ParseID(req.ID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	counts, err := s.projects.Delete(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return created(c, project.Deleted{ID: req.ID, Deleted: true, Cascaded: counts})
}

func (s *Server) listProjectMembers(c *fiber.Ctx) error {
	id, err := project.ParseID(c.Query("projectId"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	v := project.ToView(p)
	return respond(c, http.StatusOK, ProjectMembers{ProjectID: v.ID, Items: v.Members})
}

func (s *Server) memberTarget(c *fiber.Ctx) (project.MemberRequest, uuid.UUID, uuid.UUID, error) {
	req, err := decodeBody[project.MemberRequest](c)
	if err != nil {
		return req, uuid.Nil, uuid.Nil, err
	}
	pid, err := project.ParseID(req.ProjectID)
	if err != nil {
		return req, uuid.Nil, uuid.Nil, err
	}
	uid, err := project.ParseUserID("userId", req.UserID)
	return req, pid, uid, err
}

func (s *Server) addProjectMember(c *fiber.Ctx) error {
	req, pid, uid, err := s.memberTarget(c)
	if err != nil {
		return err
	}
	role := project.RoleMember
	if req.Role != "" {
		if err := project.ValidRole(req.Role); err != nil {
			return err
		}
		role = req.Role
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.AddMember(c.UserContext(), shard, ws, pid, uid, role)
	if err != nil {
		return err
	}
	return created(c, project.ToView(p))
}

func (s *Server) removeProjectMember(c *fiber.Ctx) error {
	_, pid, uid, err := s.memberTarget(c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	p, err := s.projects.RemoveMember(c.UserContext(), shard, ws, pid, uid)
	if err != nil {
		return err
	}
	return created(c, project.ToView(p))
}
