package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
)

// RiskListQuery documents the risk list's parameters.
type RiskListQuery struct {
	ListQuery
	ProjectID       string `query:"projectId" doc:"Omit for the risks of the whole workspace"`
	Status          string `query:"status" enum:"OPEN,MITIGATING,RESOLVED"`
	Severity        string `query:"severity" enum:"LOW,MEDIUM,HIGH,CRITICAL"`
	OwnerID         string `query:"ownerId" format:"uuid"`
	Q               string `query:"q" doc:"Case-insensitive substring of the title or description"`
	CreatedAfter    string `query:"createdAfter" format:"date-time" doc:"Created at or after"`
	CreatedBefore   string `query:"createdBefore" format:"date-time" doc:"Created before"`
	IncludeArchived bool   `query:"includeArchived"`
}

// RiskDetailQuery names one risk.
type RiskDetailQuery struct {
	ID string `query:"id" required:"true"`
}

func (s *Server) riskOperations() []Operation {
	const tag, base = "Risks", "/openapi/v1/resource/risk/"
	read, write := "risks:read", "risks:write"
	update := func(method, id string) Operation {
		return Operation{Method: method, Path: base + "update", ID: id, Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Change a risk; status moves follow the table (400 INVALID_TRANSITION otherwise)", Body: risk.UpdateRequest{},
			Result: risk.View{}, Status: http.StatusCreated, Handler: s.updateRisk}
	}
	return []Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listRisks", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Risks, newest first; without projectId, the whole workspace's", Query: RiskListQuery{}, Result: risk.List{}, Status: http.StatusOK, Handler: s.listRisks},
		{Method: http.MethodGet, Path: base + "detail", ID: "getRisk", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One risk", Query: RiskDetailQuery{}, Result: risk.View{}, Status: http.StatusOK, Handler: s.getRisk},
		{Method: http.MethodPost, Path: base + "create", ID: "createRisk", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Register a risk (status OPEN)", Body: risk.CreateRequest{}, Result: risk.View{}, Status: http.StatusCreated, Handler: s.createRisk},
		update(http.MethodPost, "updateRisk"),
		update(http.MethodPatch, "patchRisk"),
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveRisk", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Archive a risk", Body: risk.IDRequest{}, Result: risk.View{}, Status: http.StatusCreated, Handler: s.archiveRisk(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreRisk", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Restore an archived risk", Body: risk.IDRequest{}, Result: risk.View{}, Status: http.StatusCreated, Handler: s.archiveRisk(false)},
	}
}

func (s *Server) listRisks(c *fiber.Ctx) error {
	var f risk.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.ProjectID, err = queryProject(c, "projectId"); err != nil {
		return err
	}
	if f.Status, err = queryEnum(c, "status", risk.Statuses...); err != nil {
		return err
	}
	if f.Severity, err = queryEnum(c, "severity", risk.Severities...); err != nil {
		return err
	}
	if f.OwnerID, err = queryUser(c, "ownerId"); err != nil {
		return err
	}
	if f.CreatedAfter, err = queryTime(c, "createdAfter"); err != nil {
		return err
	}
	if f.CreatedBefore, err = queryTime(c, "createdBefore"); err != nil {
		return err
	}
	if f.IncludeArchived, err = queryBool(c, "includeArchived"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "risks"); err != nil {
		return err
	}
	f.Q = c.Query("q")
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, err := s.risks.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := risk.List{Items: []risk.View{}, NextCursor: nextCursor("risks", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, r := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, risk.ToView(r))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) getRisk(c *fiber.Ctx) error {
	id, err := risk.ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	r, err := s.risks.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, risk.ToView(r))
}

func (s *Server) createRisk(c *fiber.Ctx) error {
	req, err := decodeBody[risk.CreateRequest](c)
	if err != nil {
		return err
	}
	in := risk.NewRisk{Description: req.Description, Severity: "MEDIUM"}
	if req.ProjectID == "" {
		return pmapi.Invalid("projectId", "projectId is required")
	}
	if in.Title, err = risk.ValidTitle(req.Title); err != nil {
		return err
	}
	if err := risk.ValidDescription(req.Description); err != nil {
		return err
	}
	if req.Severity != "" {
		if err := risk.ValidSeverity(req.Severity); err != nil {
			return err
		}
		in.Severity = req.Severity
	}
	if in.OwnerID, err = optionalUser("ownerId", req.OwnerID); err != nil {
		return err
	}
	if in.ProjectID, err = project.ParseID(req.ProjectID); err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	r, err := s.risks.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return created(c, risk.ToView(r))
}

func (s *Server) updateRisk(c *fiber.Ctx) error {
	req, err := decodeBody[risk.UpdateRequest](c)
	if err != nil {
		return err
	}
	if req.RiskID == "" {
		return pmapi.Invalid("riskId", "riskId is required")
	}
	var ch risk.Changes
	notNull := func(field string, set bool) error {
		if !set && bodyHas(c, field) {
			return pmapi.Invalid(field, "%s cannot be null", field)
		}
		return nil
	}
	if req.Status != nil {
		ch.Status = req.Status
	} else if err := notNull("status", false); err != nil {
		return err
	}
	if req.Title != nil {
		t, err := risk.ValidTitle(*req.Title)
		if err != nil {
			return err
		}
		ch.Title = &t
	} else if err := notNull("title", false); err != nil {
		return err
	}
	if bodyHas(c, "description") {
		if err := risk.ValidDescription(req.Description); err != nil {
			return err
		}
		ch.Description = &req.Description
	}
	if req.Severity != nil {
		if err := risk.ValidSeverity(*req.Severity); err != nil {
			return err
		}
		ch.Severity = req.Severity
	} else if err := notNull("severity", false); err != nil {
		return err
	}
	if bodyHas(c, "ownerId") {
		owner, err := optionalUser("ownerId", req.OwnerID)
		if err != nil {
			return err
		}
		ch.OwnerID = &owner
	}
	id, err := risk.ParseID(req.RiskID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	r, err := s.risks.Update(c.UserContext(), shard, ws, id, ch)
	if err != nil {
		return err
	}
	return created(c, risk.ToView(r))
}

func (s *Server) archiveRisk(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := decodeBody[risk.IDRequest](c)
		if err != nil {
			return err
		}
		id, err := risk.ParseID(req.RiskID)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		r, err := s.risks.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return created(c, risk.ToView(r))
	}
}
