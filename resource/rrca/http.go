package rrca

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/facet"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
)

// ListQuery documents and decodes the analysis list's parameters.
type ListQuery struct {
	api.ListQuery
	Phase           string     `query:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	ProjectID       *uuid.UUID `query:"projectId" id:"project"`
	SourceRiskID    *uuid.UUID `query:"sourceRiskId" id:"risk"`
	IncludeArchived bool       `query:"includeArchived"`
}

// The scopes of analyses.
const (
	ScopeRead  = "rrca:read"
	ScopeWrite = "rrca:write"
)

// Resource registers root-cause analyses with the server. Corrective actions
// and look-across applies create action items through items.
func Resource(s Store) api.Resource {
	return api.Resource{
		Name: "rrca", Scopes: []string{ScopeRead, ScopeWrite}, Tables: Tables,
		Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade:    &facet.Cascade{Table: "rrca_analyses", Event: "rrca.deleted", IDPrefix: IDPrefix, IDField: "rrcaId", Remove: RemoveInProject},
		Operations: func(api.Catalog) []api.Operation { return handlers{s}.operations() },
	}
}

type handlers struct{ analyses Store }

// NodeListQuery filters nodes by kind.
type NodeListQuery struct {
	Kind string `query:"kind" enum:"PROBLEM,WHY,CAUSE,ROOT_CAUSE,CONTRIBUTING_FACTOR,ESCAPE_POINT,EVIDENCE,WHY_SUGGESTION"`
}

// SimilarQuery bounds the similar list.
type SimilarQuery struct {
	Limit int `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"1 to 200; default 50"`
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
	Suggestion  SuggestionView    `json:"suggestion"`
	ActionItems []actionitem.View `json:"actionItems"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (Applied) SchemaName() string { return "Applied" }

// SchemaName keeps the document's name of the type it was in package api.
func (ApplyRequest) SchemaName() string { return "ApplyRequest" }

// SchemaName keeps the document's name of the type it was in package api.
func (RejectRequest) SchemaName() string { return "RejectRequest" }

func (h handlers) operations() []api.Operation {
	const tag, base = "Root-cause analysis (RRCA)", "/openapi/v1/resource/rrca"
	read, write := ScopeRead, ScopeWrite
	one := base + "/{rrcaId}"
	return []api.Operation{
		{Method: http.MethodGet, Path: base, ID: "listRRCA", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Analyses, newest first", Query: ListQuery{}, Result: List{}, Status: http.StatusOK, Handler: h.listRRCA},
		{Method: http.MethodPost, Path: base, ID: "createRRCA", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Start an analysis, from scratch or from a risk (sourceRiskId copies its title and description)", Body: CreateRequest{}, Result: View{},
			Status: http.StatusCreated, Handler: h.createRRCA},
		{Method: http.MethodGet, Path: one, ID: "getRRCA", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "One analysis with node count, corrective actions and phase history", Result: Detail{}, Status: http.StatusOK, Handler: h.getRRCA},
		{Method: http.MethodPatch, Path: one, ID: "updateRRCA", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Edit an analysis's title or problem statement", Body: UpdateRequest{}, Result: View{}, Status: http.StatusOK, Handler: h.updateRRCA},
		{Method: http.MethodPost, Path: one + "/advance", ID: "advanceRRCA", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Move to the next phase (409 GATE_NOT_MET naming the gate)", Body: AdvanceRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.advanceRRCA},
		{Method: http.MethodPost, Path: one + "/archive", ID: "archiveRRCA", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Archive an analysis", Result: View{}, Status: http.StatusCreated, Handler: h.archiveRRCA(true)},
		{Method: http.MethodPost, Path: one + "/restore", ID: "restoreRRCA", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Restore an archived analysis", Result: View{}, Status: http.StatusCreated, Handler: h.archiveRRCA(false)},
		{Method: http.MethodGet, Path: one + "/nodes", ID: "listRRCANodes", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "The analysis's nodes (a tree through parentId)", Query: NodeListQuery{}, Result: NodeList{}, Status: http.StatusOK, Handler: h.listNodes},
		{Method: http.MethodPost, Path: one + "/nodes", ID: "createRRCANode", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a node", Body: NodeRequest{}, Result: NodeView{}, Status: http.StatusCreated, Handler: h.createNode},
		{Method: http.MethodDelete, Path: one + "/nodes/{nodeId}", ID: "deleteRRCANode", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Delete a node and its whole subtree", Result: NodeDeleted{}, Status: http.StatusOK, Handler: h.deleteNode},
		{Method: http.MethodPost, Path: one + "/nodes/{nodeId}/accept", ID: "acceptRRCANode", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Accept a WHY_SUGGESTION node: it becomes a WHY", Result: NodeView{}, Status: http.StatusCreated, Handler: h.acceptNode},
		{Method: http.MethodPost, Path: one + "/corrective-actions", ID: "createCorrectiveAction", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Emit a corrective action from a ROOT_CAUSE node: creates an action item (source CORRECTIVE_ACTION), linked both ways",
			Body:    CorrectiveRequest{}, Result: CorrectiveCreated{}, Status: http.StatusCreated, Handler: h.createCorrective},
		{Method: http.MethodGet, Path: one + "/corrective-actions", ID: "listCorrectiveActions", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "The analysis's corrective actions with their items' status", Result: CorrectiveActionList{}, Status: http.StatusOK, Handler: h.listCorrective},
		{Method: http.MethodGet, Path: one + "/similar", ID: "listSimilarRRCA", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Other analyses ranked by text similarity (recomputed by a job after each change; pending says one is queued)",
			Query:   SimilarQuery{}, Result: SimilarList{}, Status: http.StatusOK, Handler: h.similarRRCA},
		{Method: http.MethodPost, Path: one + "/5why/suggest", ID: "suggestFiveWhy", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Start a 5-why suggestion run; its WHY_SUGGESTION nodes appear under the deepest WHY when READY", Result: RunView{},
			Status: http.StatusCreated, Handler: h.startRun(RunFiveWhy)},
		{Method: http.MethodGet, Path: one + "/5why/suggestions/{runId}", ID: "getFiveWhyRun", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "A 5-why run and the nodes it wrote", Result: RunView{}, Status: http.StatusOK, Handler: h.getRun},
		{Method: http.MethodGet, Path: one + "/look-across", ID: "listLookAcross", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Look-across (yokoten) suggestions: other projects with the same failure mechanism", Result: SuggestionList{},
			Status: http.StatusOK, Handler: h.listLookAcross},
		{Method: http.MethodPost, Path: one + "/look-across/suggest", ID: "suggestLookAcross", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Start a look-across run over every other project of the workspace", Result: RunView{}, Status: http.StatusCreated,
			Handler: h.startRun(RunLookAcross)},
		{Method: http.MethodGet, Path: one + "/look-across/runs/{runId}", ID: "getLookAcrossRun", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "A look-across run's status", Result: RunView{}, Status: http.StatusOK, Handler: h.getRun},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/apply", ID: "applyLookAcross", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Apply a suggestion: create its corrective actions as action items (source LOOK_ACROSS) in the target project",
			Body:    ApplyRequest{}, Result: Applied{}, Status: http.StatusCreated, Handler: h.applyLookAcross},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/reject", ID: "rejectLookAcross", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Reject a suggestion with a reason", Body: RejectRequest{}, Result: SuggestionView{}, Status: http.StatusCreated, Handler: h.rejectLookAcross},
	}
}

func rrcaPath(c *fiber.Ctx) (uuid.UUID, error) { return ParseID(c.Params("rrcaId")) }

func (h handlers) listRRCA(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	before, err := q.Before("rrca")
	if err != nil {
		return err
	}
	f := Filter{Phase: q.Phase, ProjectID: q.ProjectID, SourceRiskID: q.SourceRiskID, IncludeArchived: q.IncludeArchived, Before: before, Limit: q.Limit + 1}
	shard, ws := api.Tenant(c)
	items, err := h.analyses.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := List{}
	page.Items, page.NextCursor = api.Page("rrca", items, q.Limit, func(a Analysis) uuid.UUID { return a.ID }, ToView)
	return api.Respond(c, http.StatusOK, page)
}

func (h handlers) createRRCA(c *fiber.Ctx) error {
	req, err := api.DecodeBody[CreateRequest](c)
	if err != nil {
		return err
	}
	var in NewAnalysis
	if req.Title != "" || req.SourceRiskID == nil {
		if in.Title, err = ValidTitle(req.Title); err != nil {
			return err
		}
	}
	if req.ProblemStatement != nil {
		if err := ValidProblem(*req.ProblemStatement); err != nil {
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
		id, err := pmapi.ParseID(risk.IDPrefix, *req.SourceRiskID, "risk")
		if err != nil {
			return err
		}
		in.SourceRiskID = &id
	}
	shard, ws := api.Tenant(c)
	a, err := h.analyses.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(a))
}

func (h handlers) getRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	a, cas, history, err := h.analyses.Detail(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	d := Detail{View: ToView(a), CorrectiveActions: []CorrectiveActionView{}, PhaseHistory: history}
	if d.PhaseHistory == nil {
		d.PhaseHistory = []PhaseChange{}
	}
	for _, ca := range cas {
		d.CorrectiveActions = append(d.CorrectiveActions, ToCorrectiveView(ca))
	}
	return api.Respond(c, http.StatusOK, d)
}

func (h handlers) updateRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[UpdateRequest](c)
	if err != nil {
		return err
	}
	if req.Title != nil {
		t, err := ValidTitle(*req.Title)
		if err != nil {
			return err
		}
		req.Title = &t
	}
	if req.ProblemStatement != nil {
		if err := ValidProblem(*req.ProblemStatement); err != nil {
			return err
		}
	}
	shard, ws := api.Tenant(c)
	a, err := h.analyses.Update(c.UserContext(), shard, ws, id, req.Title, req.ProblemStatement)
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, ToView(a))
}

func (h handlers) advanceRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeOptionalBody[AdvanceRequest](c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	a, err := h.analyses.Advance(c.UserContext(), shard, ws, id, req.To, api.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(a))
}

func (h handlers) archiveRRCA(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := rrcaPath(c)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		a, err := h.analyses.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return api.Created(c, ToView(a))
	}
}

func (h handlers) listNodes(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	q, err := api.DecodeQuery[NodeListQuery](c)
	if err != nil {
		return err
	}
	kind := q.Kind
	shard, ws := api.Tenant(c)
	nodes, err := h.analyses.Nodes(c.UserContext(), shard, ws, id, kind)
	if err != nil {
		return err
	}
	out := NodeList{Items: []NodeView{}}
	for _, n := range nodes {
		out.Items = append(out.Items, ToNodeView(n))
	}
	return api.Respond(c, http.StatusOK, out)
}

func (h handlers) createNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[NodeRequest](c)
	if err != nil {
		return err
	}
	text, err := ValidNewNode(req.Kind, req.Text)
	if err != nil {
		return err
	}
	var parent *uuid.UUID
	if req.ParentID != nil {
		p, err := pmapi.ParseID(NodeIDPrefix, *req.ParentID, "node")
		if err != nil {
			return pmapi.Invalid("parentId", "parentId must be a node of this analysis")
		}
		parent = &p
	}
	shard, ws := api.Tenant(c)
	n, err := h.analyses.AddNode(c.UserContext(), shard, ws, id, req.Kind, text, parent)
	if err != nil {
		return err
	}
	return api.Created(c, ToNodeView(n))
}

func (h handlers) deleteNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(NodeIDPrefix, c.Params("nodeId"), "node")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	removed, err := h.analyses.DeleteNode(c.UserContext(), shard, ws, id, node)
	if err != nil {
		return err
	}
	out := NodeDeleted{ID: c.Params("nodeId"), Deleted: []string{}}
	for _, r := range removed {
		out.Deleted = append(out.Deleted, pmapi.FormatID(NodeIDPrefix, r))
	}
	return api.Respond(c, http.StatusOK, out)
}

func (h handlers) acceptNode(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(NodeIDPrefix, c.Params("nodeId"), "node")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	n, err := h.analyses.AcceptSuggestion(c.UserContext(), shard, ws, id, node)
	if err != nil {
		return err
	}
	return api.Created(c, ToNodeView(n))
}

func (h handlers) createCorrective(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[CorrectiveRequest](c)
	if err != nil {
		return err
	}
	node, err := pmapi.ParseID(NodeIDPrefix, req.NodeID, "node")
	if err != nil {
		return pmapi.Invalid("nodeId", "nodeId must be a ROOT_CAUSE node of this analysis")
	}
	item, err := actionitem.ParseCreate(actionitem.CreateRequest{Title: req.Title, Description: req.Description, OwnerHint: req.OwnerHint, DueDate: req.DueDate})
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	ca, it, err := h.analyses.AddCorrective(c.UserContext(), shard, ws, id, node, item)
	if err != nil {
		return err
	}
	return api.Created(c, CorrectiveCreated{CorrectiveAction: ToCorrectiveView(ca), ActionItem: actionitem.ToView(it)})
}

func (h handlers) listCorrective(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	cas, err := h.analyses.Correctives(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	out := CorrectiveActionList{Items: []CorrectiveActionView{}}
	for _, ca := range cas {
		out.Items = append(out.Items, ToCorrectiveView(ca))
	}
	return api.Respond(c, http.StatusOK, out)
}

func (h handlers) similarRRCA(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	q, err := api.DecodeQuery[SimilarQuery](c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	out, err := h.analyses.Similar(c.UserContext(), shard, ws, id, q.Limit)
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, out)
}

func (h handlers) startRun(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := rrcaPath(c)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		r, err := h.analyses.CreateRun(c.UserContext(), shard, ws, id, kind)
		if err != nil {
			return err
		}
		return api.Created(c, ToRunView(r, nil))
	}
}

func (h handlers) getRun(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	run, err := pmapi.ParseID(RunIDPrefix, c.Params("runId"), "suggestion run")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	r, nodes, err := h.analyses.GetRun(c.UserContext(), shard, ws, id, run)
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, ToRunView(r, nodes))
}

func (h handlers) listLookAcross(c *fiber.Ctx) error {
	id, err := rrcaPath(c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	items, err := h.analyses.Suggestions(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, SuggestionList{Items: items})
}

func suggestionPath(c *fiber.Ctx) (uuid.UUID, uuid.UUID, error) {
	id, err := rrcaPath(c)
	if err != nil {
		return id, uuid.Nil, err
	}
	sug, err := pmapi.ParseID(SuggestionIDPrefix, c.Params("suggestionId"), "suggestion")
	return id, sug, err
}

func (h handlers) applyLookAcross(c *fiber.Ctx) error {
	id, sug, err := suggestionPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeOptionalBody[ApplyRequest](c)
	if err != nil {
		return err
	}
	if err := actionitem.ValidOwnerHint(req.OwnerHint); err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	v, items, err := h.analyses.Apply(c.UserContext(), shard, ws, id, sug, req.OwnerHint, req.DueDate)
	if err != nil {
		return err
	}
	out := Applied{Suggestion: v, ActionItems: []actionitem.View{}}
	for _, it := range items {
		out.ActionItems = append(out.ActionItems, actionitem.ToView(it))
	}
	return api.Created(c, out)
}

func (h handlers) rejectLookAcross(c *fiber.Ctx) error {
	id, sug, err := suggestionPath(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[RejectRequest](c)
	if err != nil {
		return err
	}
	if len([]rune(req.Reason)) < 1 || len([]rune(req.Reason)) > 2000 {
		return pmapi.Invalid("reason", "reason must be 1 to 2000 characters")
	}
	shard, ws := api.Tenant(c)
	v, err := h.analyses.Reject(c.UserContext(), shard, ws, id, sug, req.Reason)
	if err != nil {
		return err
	}
	return api.Created(c, v)
}
