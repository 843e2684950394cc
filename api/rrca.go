package api

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/rrca"
)

// RRCAListQuery documents the analysis list's parameters.
type RRCAListQuery struct {
	ListQuery
	Phase           string `query:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	ProjectID       string `query:"projectId"`
	SourceRiskID    string `query:"sourceRiskId"`
	IncludeArchived bool   `query:"includeArchived"`
}

// NodeListQuery filters nodes by kind.
type NodeListQuery struct {
	Kind string `query:"kind" enum:"PROBLEM,WHY,CAUSE,ROOT_CAUSE,CONTRIBUTING_FACTOR,ESCAPE_POINT,EVIDENCE,WHY_SUGGESTION"`
}

// SimilarQuery bounds the similar list.
type SimilarQuery struct {
	Limit int `query:"limit" doc:"1 to 200; default 50"`
}

// ApplyRequest applies a look-across suggestion; the body may be left out.
type ApplyRequest struct {
	OwnerHint *string    `json:"ownerHint,omitempty" doc:"Owner hint of the action items created"`
	DueDate   *time.Time `json:"dueDate,omitempty" doc:"Due date of the action items created"`
}

// RejectRequest rejects a look-across suggestion.
type RejectRequest struct {
	Reason string `json:"reason" doc:"Why the mechanism does not apply to the target project"`
}

// Applied answers an apply: the suggestion and the action items it created.
type Applied struct {
	Suggestion  rrca.SuggestionView `json:"suggestion"`
	ActionItems []actionitem.View   `json:"actionItems"`
}

func (s *Server) rrcaOperations() []Operation {
	const tag, base = "Root-cause analysis (RRCA)", "/openapi/v1/resource/rrca"
	read, write := "rrca:read", "rrca:write"
	one := base + "/{rrcaId}"
	return []Operation{
		{Method: http.MethodGet, Path: base, ID: "listRRCA", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Analyses, newest first", Query: RRCAListQuery{}, Result: rrca.List{}, Status: http.StatusOK, Handler: s.listRRCA},
		{Method: http.MethodPost, Path: base, ID: "createRRCA", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Start an analysis, from scratch or from a risk (sourceRiskId copies its title and description)", Body: rrca.CreateRequest{}, Result: rrca.View{},
			Status: http.StatusCreated, Handler: s.createRRCA},
		{Method: http.MethodGet, Path: one, ID: "getRRCA", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One analysis with node count, corrective actions and phase history", Result: rrca.Detail{}, Status: http.StatusOK, Handler: s.getRRCA},
		{Method: http.MethodPatch, Path: one, ID: "updateRRCA", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Edit an analysis's title or problem statement", Body: rrca.UpdateRequest{}, Result: rrca.View{}, Status: http.StatusOK, Handler: s.updateRRCA},
		{Method: http.MethodPost, Path: one + "/advance", ID: "advanceRRCA", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Move to the next phase (409 GATE_NOT_MET naming the gate)", Body: rrca.AdvanceRequest{}, Result: rrca.View{}, Status: http.StatusCreated, Handler: s.advanceRRCA},
		{Method: http.MethodPost, Path: one + "/archive", ID: "archiveRRCA", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Archive an analysis", Result: rrca.View{}, Status: http.StatusCreated, Handler: s.archiveRRCA(true)},
		{Method: http.MethodPost, Path: one + "/restore", ID: "restoreRRCA", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Restore an archived analysis", Result: rrca.View{}, Status: http.StatusCreated, Handler: s.archiveRRCA(false)},
		{Method: http.MethodGet, Path: one + "/nodes", ID: "listRRCANodes", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "The analysis's nodes (a tree through parentId)", Query: NodeListQuery{}, Result: rrca.NodeList{}, Status: http.StatusOK, Handler: s.listNodes},
		{Method: http.MethodPost, Path: one + "/nodes", ID: "createRRCANode", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a node", Body: rrca.NodeRequest{}, Result: rrca.NodeView{}, Status: http.StatusCreated, Handler: s.createNode},
		{Method: http.MethodDelete, Path: one + "/nodes/{nodeId}", ID: "deleteRRCANode", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Delete a node and its whole subtree", Result: rrca.NodeDeleted{}, Status: http.StatusOK, Handler: s.deleteNode},
		{Method: http.MethodPost, Path: one + "/nodes/{nodeId}/accept", ID: "acceptRRCANode", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Accept a WHY_SUGGESTION node: it becomes a WHY", Result: rrca.NodeView{}, Status: http.StatusCreated, Handler: s.acceptNode},
		{Method: http.MethodPost, Path: one + "/corrective-actions", ID: "createCorrectiveAction", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Emit a corrective action from a ROOT_CAUSE node: creates an action item (source CORRECTIVE_ACTION), linked both ways",
			Body:    rrca.CorrectiveRequest{}, Result: rrca.CorrectiveCreated{}, Status: http.StatusCreated, Handler: s.createCorrective},
		{Method: http.MethodGet, Path: one + "/corrective-actions", ID: "listCorrectiveActions", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "The analysis's corrective actions with their items' status", Result: rrca.CorrectiveActionList{}, Status: http.StatusOK, Handler: s.listCorrective},
		{Method: http.MethodGet, Path: one + "/similar", ID: "listSimilarRRCA", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Other analyses ranked by text similarity (recomputed by a job after each change; pending says one is queued)",
			Query:   SimilarQuery{}, Result: rrca.SimilarList{}, Status: http.StatusOK, Handler: s.similarRRCA},
		{Method: http.MethodPost, Path: one + "/5why/suggest", ID: "suggestFiveWhy", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Start a 5-why suggestion run; its WHY_SUGGESTION nodes appear under the deepest WHY when READY", Result: rrca.RunView{},
			Status: http.StatusCreated, Handler: s.startRun(rrca.RunFiveWhy)},
		{Method: http.MethodGet, Path: one + "/5why/suggestions/{runId}", ID: "getFiveWhyRun", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "A 5-why run and the nodes it wrote", Result: rrca.RunView{}, Status: http.StatusOK, Handler: s.getRun},
		{Method: http.MethodGet, Path: one + "/look-across", ID: "listLookAcross", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Look-across (yokoten) suggestions: other projects with the same failure mechanism", Result: rrca.SuggestionList{},
			Status: http.StatusOK, Handler: s.listLookAcross},
		{Method: http.MethodPost, Path: one + "/look-across/suggest", ID: "suggestLookAcross", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Start a look-across run over every other project of the workspace", Result: rrca.RunView{}, Status: http.StatusCreated,
			Handler: s.startRun(rrca.RunLookAcross)},
		{Method: http.MethodGet, Path: one + "/look-across/runs/{runId}", ID: "getLookAcrossRun", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "A look-across run's status", Result: rrca.RunView{}, Status: http.StatusOK, Handler: s.getRun},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/apply", ID: "applyLookAcross", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Apply a suggestion: create its corrective actions as action items (source LOOK_ACROSS) in the target project",
			Body:    ApplyRequest{}, Result: Applied{}, Status: http.StatusCreated, Handler: s.applyLookAcross},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/reject", ID: "rejectLookAcross", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Reject a suggestion with a reason", Body: RejectRequest{}, Result: rrca.SuggestionView{}, Status: http.StatusCreated, Handler: s.rejectLookAcross},
	}
}

func rrcaPath(c *fiber.Ctx) (uuid.UUID, error) { return rrca.ParseID(c.Params("rrcaId")) }

func (s *Server) listRRCA(c *fiber.Ctx) error {
	var f rrca.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.Phase, err = queryEnum(c, "phase", rrca.Phases...); err != nil {
		return err
	}
	if f.ProjectID, err = queryProject(c, "projectId"); err != nil {
		return err
	}
	if raw := c.Query("sourceRiskId"); raw != "" {
		id, err := pmapi.ParseID("rsk_", raw, "risk")
		if err != nil {
			return pmapi.Invalid("sourceRiskId", "sourceRiskId must be a risk id (rsk_...)")
		}
		f.SourceRiskID = &id
	}
	if f.IncludeArchived, err = queryBool(c, "includeArchived"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "rrca"); err != nil {
		return err
	}
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, err := s.analyses.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := rrca.List{Items: []rrca.View{}, NextCursor: nextCursor("rrca", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, a := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, rrca.ToView(a))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) createRRCA(c *fiber.Ctx) error {
	req, err := decodeBody[rrca.CreateRequest](c)
	if err != nil {
		return err
	}
	var in rrca.NewAnalysis
	if req.Title != "" || req.SourceRiskID == nil {
		if in.Title, err = rrca.ValidTitle(req.Title); err != nil {
			return err
		}
	}
	if req.ProblemStatement != nil {
		if err := rrca.ValidProblem(*req.ProblemStatement); err != nil {
			return err
		}
		in.ProblemStatement = req.ProblemStatement
	}
	if req.ProjectID != nil {
		id, err := project.ParseID(*req.ProjectID)
		if err != nil {
			return err
		}
		in.ProjectID = &id
	}
	if req.SourceRiskID != nil {
		id, err := pmapi.ParseID("rsk_", *req.SourceRiskID, "risk")
		if err != nil {
			return err
		}
		in.SourceRiskID = &id
	}
	shard, ws := tenantOf(c)
	a, err := s.analyses.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return created(c, rrca.ToView(a))
}

func (s *Server) getRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	a, cas, history, err := s.analyses.Detail(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	d := rrca.Detail{View: rrca.ToView(a), CorrectiveActions: []rrca.CorrectiveActionView{}, PhaseHistory: history}
	if d.PhaseHistory == nil {
		d.PhaseHistory = []rrca.PhaseChange{}
	}
	for _, ca := range cas {
		d.CorrectiveActions = append(d.CorrectiveActions, rrca.ToCorrectiveView(ca))
	}
	return respond(c, http.StatusOK, d)
}

func (s *Server) updateRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[rrca.UpdateRequest](c)
	if err != nil {
		return err
	}
	if req.Title != nil {
		t, err := rrca.ValidTitle(*req.Title)
		if err != nil {
			return err
		}
		req.Title = &t
	}
	if req.ProblemStatement != nil {
		if err := rrca.ValidProblem(*req.ProblemStatement); err != nil {
			return err
		}
	}
	shard, ws := tenantOf(c)
	a, err := s.analyses.Update(c.UserContext(), shard, ws, id, req.Title, req.ProblemStatement)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, rrca.ToView(a))
}

func (s *Server) advanceRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := decodeOptionalBody[rrca.AdvanceRequest](c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	a, err := s.analyses.Advance(c.UserContext(), shard, ws, id, req.To, principalOf(c).ClientID)
	if err != nil {
		return err
	}
	return created(c, rrca.ToView(a))
}

func (s *Server) archiveRRCA(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := rrcaPath(c)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		a, err := s.analyses.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return created(c, rrca.ToView(a))
	}
}

func (s *Server) listNodes(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	kind, err := queryEnum(c, "kind", rrca.NodeKinds...)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	nodes, err := s.analyses.Nodes(c.UserContext(), shard, ws, id, kind)
	if err != nil {
		return err
	}
	out := rrca.NodeList{Items: []rrca.NodeView{}}
	for _, n := range nodes {
		out.Items = append(out.Items, rrca.ToNodeView(n))
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) createNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[rrca.NodeRequest](c)
	if err != nil {
		return err
	}
	text, err := rrca.ValidNewNode(req.Kind, req.Text)
	if err != nil {
		return err
	}
	var parent *uuid.UUID
	if req.ParentID != nil {
		p, err := pmapi.ParseID(rrca.NodeIDPrefix, *req.ParentID, "node")
		if err != nil {
			return pmapi.Invalid("parentId", "parentId must be a node of this analysis")
		}
		parent = &p
	}
	shard, ws := tenantOf(c)
	n, err := s.analyses.AddNode(c.UserContext(), shard, ws, id, req.Kind, text, parent)
	if err != nil {
		return err
	}
	return created(c, rrca.ToNodeView(n))
}

func (s *Server) deleteNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(rrca.NodeIDPrefix, c.Params("nodeId"), "node")
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	removed, err := s.analyses.DeleteNode(c.UserContext(), shard, ws, id, node)
	if err != nil {
		return err
	}
	out := rrca.NodeDeleted{ID: c.Params("nodeId"), Deleted: []string{}}
	for _, r := range removed {
		out.Deleted = append(out.Deleted, pmapi.FormatID(rrca.NodeIDPrefix, r))
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) acceptNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(rrca.NodeIDPrefix, c.Params("nodeId"), "node")
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	n, err := s.analyses.AcceptSuggestion(c.UserContext(), shard, ws, id, node)
	if err != nil {
		return err
	}
	return created(c, rrca.ToNodeView(n))
}

func (s *Server) createCorrective(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[rrca.CorrectiveRequest](c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(rrca.NodeIDPrefix, req.NodeID, "node")
	if err != nil {
		return pmapi.Invalid("nodeId", "nodeId must be a ROOT_CAUSE node of this analysis")
	}
	item, err := newActionItem(actionitem.CreateRequest{Title: req.Title, Description: req.Description, OwnerHint: req.OwnerHint, DueDate: req.DueDate})
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	ca, it, err := s.analyses.AddCorrective(c.UserContext(), shard, ws, id, node, item)
	if err != nil {
		return err
	}
	return created(c, rrca.CorrectiveCreated{CorrectiveAction: rrca.ToCorrectiveView(ca), ActionItem: actionitem.ToView(it)})
}

func (s *Server) listCorrective(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	cas, err := s.analyses.Correctives(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	out := rrca.CorrectiveActionList{Items: []rrca.CorrectiveActionView{}}
	for _, ca := range cas {
		out.Items = append(out.Items, rrca.ToCorrectiveView(ca))
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) similarRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	limit, err := queryLimit(c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	out, err := s.analyses.Similar(c.UserContext(), shard, ws, id, limit)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) startRun(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := rrcaPath(c)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		r, err := s.analyses.CreateRun(c.UserContext(), shard, ws, id, kind)
		if err != nil {
			return err
		}
		return created(c, rrca.ToRunView(r, nil))
	}
}

func (s *Server) getRun(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	run, err := pmapi.ParseID(rrca.RunIDPrefix, c.Params("runId"), "suggestion run")
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	r, nodes, err := s.analyses.GetRun(c.UserContext(), shard, ws, id, run)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, rrca.ToRunView(r, nodes))
}

func (s *Server) listLookAcross(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	items, err := s.analyses.Suggestions(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, rrca.SuggestionList{Items: items})
}

func suggestionPath(c *fiber.Ctx) (uuid.UUID, uuid.UUID, error) {
	id, err := rrcaPath(c)
	if err != nil {
		return id, uuid.Nil, err
	}
	sug, err := pmapi.ParseID(rrca.SuggestionIDPrefix, c.Params("suggestionId"), "suggestion")
	return id, sug, err
}

func (s *Server) applyLookAcross(c *fiber.Ctx) error {
	id, sug, err := suggestionPath(c)
	if err != nil {
		return err
	}
	req, err := decodeOptionalBody[ApplyRequest](c)
	if err != nil {
		return err
	}
	if err := actionitem.ValidOwnerHint(req.OwnerHint); err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	v, items, err := s.analyses.Apply(c.UserContext(), shard, ws, id, sug, req.OwnerHint, req.DueDate)
	if err != nil {
		return err
	}
	out := Applied{Suggestion: v, ActionItems: []actionitem.View{}}
	for _, it := range items {
		out.ActionItems = append(out.ActionItems, actionitem.ToView(it))
	}
	return created(c, out)
}

func (s *Server) rejectLookAcross(c *fiber.Ctx) error {
	id, sug, err := suggestionPath(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[RejectRequest](c)
	if err != nil {
		return err
	}
	if len([]rune(req.Reason)) < 1 || len([]rune(req.Reason)) > 2000 {
		return pmapi.Invalid("reason", "reason must be 1 to 2000 characters")
	}
	shard, ws := tenantOf(c)
	v, err := s.analyses.Reject(c.UserContext(), shard, ws, id, sug, req.Reason)
	if err != nil {
		return err
	}
	return created(c, v)
}
