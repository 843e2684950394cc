package rrca

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/tenant"
)

// ListQuery documents and decodes the analysis list's parameters.
type ListQuery struct {
	api.ListQuery
	Phase           string     `query:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	ProjectID       *uuid.UUID `query:"projectId" id:"project"`
	SourceRiskID    *uuid.UUID `query:"sourceRiskId" id:"risk"`
	IncludeArchived bool       `query:"includeArchived"`
}

// routes are the analyses' operations, REST-shaped under one base.
var routes = route.Set{Name: "rrca", Tag: "Root-cause analysis (RRCA)", Base: "/openapi/v1/resource/rrca", Read: "rrca:read", Write: "rrca:write"}

// Resource registers root-cause analyses with the server. Corrective actions
// and look-across applies create action items through items.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: Tables, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "rrca_analyses", Event: "rrca.deleted", IDPrefix: IDPrefix, IDField: "rrcaId", Remove: RemoveInProject},
		TagDoc:  "Rapid root-cause analyses: phases DEFINE to CLOSED with gates, a cause tree, corrective actions, similar analyses, 5-why and look-across suggestions.",
	}, handlers{s}.operations)
}

type handlers struct{ analyses Store }

// NodeListQuery filters nodes by kind.
type NodeListQuery struct {
	api.ListQuery
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

func (h handlers) operations(api.Catalog) []api.Operation {
	const one = "/{rrcaId}"
	analysis := api.PathID("rrcaId", ParseID)
	a := h.analyses
	return []api.Operation{
		{Method: http.MethodGet, Path: "", ID: "listRRCA",
			Summary: "Analyses, newest first", Query: ListQuery{}, Result: List{}, Handler: api.ListRows("rrca", listFilter, a.List)},
		{Method: http.MethodPost, Path: "", ID: "createRRCA", Idempotent: true,
			Summary: "Start an analysis, from scratch or from a risk (sourceRiskId copies its title and description)", Body: CreateRequest{}, Result: View{},
			Handler: api.Write(parseCreate, a.Create, ToView)},
		{Method: http.MethodGet, Path: one, ID: "getRRCA",
			Summary: "One analysis with node count, corrective actions and phase history", Result: Detail{}, Handler: api.Handle(http.StatusOK, analysis, a.Detail, ToDetail)},
		{Method: http.MethodPatch, Path: one, ID: "updateRRCA",
			Summary: "Edit an analysis's title or problem statement", Body: UpdateRequest{}, Result: View{}, Status: http.StatusOK, Handler: api.Handle(http.StatusOK, readUpdate, h.update, ToView)},
		{Method: http.MethodPost, Path: one + "/advance", ID: "advanceRRCA", Fails: []pmapi.Code{pmapi.CodeInvalidTransition, pmapi.CodeGateNotMet, pmapi.CodeConflict},
			Summary: "Move to the next phase (409 GATE_NOT_MET naming the gate)", Body: AdvanceRequest{}, Result: View{}, Handler: api.Handle(http.StatusCreated, readAdvance, h.advance, ToView)},
		{Method: http.MethodPost, Path: one + "/archive", ID: "archiveRRCA",
			Summary: "Archive an analysis", Result: View{}, Handler: api.Handle(http.StatusCreated, analysis, api.With(true, a.SetArchived), ToView)},
		{Method: http.MethodPost, Path: one + "/restore", ID: "restoreRRCA",
			Summary: "Restore an archived analysis", Result: View{}, Handler: api.Handle(http.StatusCreated, analysis, api.With(false, a.SetArchived), ToView)},
		{Method: http.MethodGet, Path: one + "/nodes", ID: "listRRCANodes",
			Summary: "The analysis's nodes (a tree through parentId)", Query: NodeListQuery{}, Result: NodeList{}, Handler: api.HandleAll("rrca-nodes", readNodeQuery, api.On(a.Nodes), nodeKey, ToNodeView)},
		{Method: http.MethodPost, Path: one + "/nodes", ID: "createRRCANode", Idempotent: true,
			Summary: "Add a node", Body: NodeRequest{}, Result: NodeView{}, Handler: api.Handle(http.StatusCreated, readNewNode, h.addNode, ToNodeView)},
		{Method: http.MethodDelete, Path: one + "/nodes/{nodeId}", ID: "deleteRRCANode", Fails: []pmapi.Code{pmapi.CodeGateNotMet},
			Summary: "Delete a node and its whole subtree (past ANALYZE, not the last ROOT_CAUSE: 409 GATE_NOT_MET)", Result: NodeDeleted{}, Status: http.StatusOK, Handler: api.Handle(http.StatusOK, readNode, h.deleteNode, api.AsIs)},
		{Method: http.MethodPost, Path: one + "/nodes/{nodeId}/accept", ID: "acceptRRCANode", Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Accept a WHY_SUGGESTION node: it becomes a WHY", Result: NodeView{}, Handler: api.Handle(http.StatusCreated, readNode, h.acceptNode, ToNodeView)},
		{Method: http.MethodPost, Path: one + "/corrective-actions", ID: "createCorrectiveAction", Idempotent: true,
			Summary: "Emit a corrective action from a ROOT_CAUSE node: creates an action item (source CORRECTIVE_ACTION), linked both ways",
			Body:    CorrectiveRequest{}, Result: CorrectiveCreated{}, Handler: api.Handle(http.StatusCreated, readCorrective, h.addCorrective, api.AsIs)},
		{Method: http.MethodGet, Path: one + "/corrective-actions", ID: "listCorrectiveActions",
			Summary: "The analysis's corrective actions with their items' status", Query: api.ListQuery{}, Result: CorrectiveActionList{}, Handler: api.HandleAll("rrca-corrective", analysis, a.Correctives, correctiveKey, ToCorrectiveView)},
		{Method: http.MethodGet, Path: one + "/similar", ID: "listSimilarRRCA",
			Summary: "Other analyses ranked by text similarity (recomputed by a job after each change; pending says one is queued)",
			Query:   SimilarQuery{}, Result: SimilarList{}, Handler: api.Handle(http.StatusOK, readSimilar, api.On(a.Similar), api.AsIs)},
		{Method: http.MethodPost, Path: one + "/5why/suggest", ID: "suggestFiveWhy",
			Summary: "Start a 5-why suggestion run; its WHY_SUGGESTION nodes appear under the deepest WHY when READY", Result: RunView{},
			Handler: api.Handle(http.StatusCreated, analysis, api.With(RunFiveWhy, a.CreateRun), toNewRunView)},
		{Method: http.MethodGet, Path: one + "/5why/suggestions/{runId}", ID: "getFiveWhyRun",
			Summary: "A 5-why run and the nodes it wrote", Result: RunView{}, Handler: api.Handle(http.StatusOK, readRun, h.getRun, api.AsIs)},
		{Method: http.MethodGet, Path: one + "/look-across", ID: "listLookAcross",
			Summary: "Look-across (yokoten) suggestions: other projects with the same failure mechanism, best first", Query: api.ListQuery{}, Result: SuggestionList{},
			Handler: api.HandleAll("rrca-look-across", analysis, a.Suggestions, suggestionKey, api.AsIs[SuggestionView])},
		{Method: http.MethodPost, Path: one + "/look-across/suggest", ID: "suggestLookAcross",
			Summary: "Start a look-across run over every other project of the workspace", Result: RunView{},
			Handler: api.Handle(http.StatusCreated, analysis, api.With(RunLookAcross, a.CreateRun), toNewRunView)},
		{Method: http.MethodGet, Path: one + "/look-across/runs/{runId}", ID: "getLookAcrossRun",
			Summary: "A look-across run's status", Result: RunView{}, Handler: api.Handle(http.StatusOK, readRun, h.getRun, api.AsIs)},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/apply", ID: "applyLookAcross", Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Apply a suggestion: create its corrective actions as action items (source LOOK_ACROSS) in the target project",
			Body:    ApplyRequest{}, Result: Applied{}, Handler: api.Handle(http.StatusCreated, readApply, h.apply, api.AsIs)},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/reject", ID: "rejectLookAcross", Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Reject a suggestion with a reason", Body: RejectRequest{}, Result: SuggestionView{}, Handler: api.Handle(http.StatusCreated, readReject, h.reject, api.AsIs)},
	}
}

func listFilter(q ListQuery, before *uuid.UUID, limit int) Filter {
	return Filter{Phase: q.Phase, ProjectID: q.ProjectID, SourceRiskID: q.SourceRiskID, IncludeArchived: q.IncludeArchived, Before: before, Limit: limit}
}

// Reading the requests: each read takes what its operation needs from the
// path, query and body, in that order, and checks it.

func parseCreate(req CreateRequest, _ func(string) bool) (NewAnalysis, error) {
	var in NewAnalysis
	var err error
	if req.Title != "" || req.SourceRiskID == nil {
		if in.Title, err = ValidTitle(req.Title); err != nil {
			return in, err
		}
	}
	if req.ProblemStatement != nil {
		if err := ValidProblem(*req.ProblemStatement); err != nil {
			return in, err
		}
		in.ProblemStatement = req.ProblemStatement
	}
	if in.ProjectID, err = pmapi.ParseOptionalID(project.ParseID, req.ProjectID); err != nil {
		return in, err
	}
	in.SourceRiskID, err = pmapi.ParseOptionalID(risk.ParseID, req.SourceRiskID)
	return in, err
}

// withAnalysis reads the analysis the path names, then what read takes from
// the rest of the request (api.DecodeBody, api.DecodeQuery, ...).
func withAnalysis[X any](c *fiber.Ctx, read func(*fiber.Ctx) (X, error)) (uuid.UUID, X, error) {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		var x X
		return id, x, err
	}
	x, err := read(c)
	return id, x, err
}

type update struct {
	id             uuid.UUID
	title, problem *string
}

func readUpdate(c *fiber.Ctx) (update, error) {
	id, req, err := withAnalysis(c, api.DecodeBody[UpdateRequest])
	if err != nil {
		return update{}, err
	}
	if req.Title != nil {
		t, err := ValidTitle(*req.Title)
		if err != nil {
			return update{}, err
		}
		req.Title = &t
	}
	if req.ProblemStatement != nil {
		if err := ValidProblem(*req.ProblemStatement); err != nil {
			return update{}, err
		}
	}
	return update{id, req.Title, req.ProblemStatement}, nil
}

type advance struct {
	id        uuid.UUID
	to, actor string
}

func readAdvance(c *fiber.Ctx) (advance, error) {
	id, req, err := withAnalysis(c, api.DecodeOptionalBody[AdvanceRequest])
	return advance{id, req.To, api.Principal(c).ClientID}, err
}

func readNodeQuery(c *fiber.Ctx) (api.Target[string], error) {
	id, q, err := withAnalysis(c, api.DecodeQuery[NodeListQuery])
	return api.Target[string]{ID: id, Change: q.Kind}, err
}

type newNode struct {
	id         uuid.UUID
	kind, text string
	parent     *uuid.UUID
}

func readNewNode(c *fiber.Ctx) (newNode, error) {
	id, req, err := withAnalysis(c, api.DecodeBody[NodeRequest])
	if err != nil {
		return newNode{}, err
	}
	text, err := ValidNewNode(req.Kind, req.Text)
	if err != nil {
		return newNode{}, err
	}
	n := newNode{id: id, kind: req.Kind, text: text}
	if req.ParentID != nil {
		p, err := pmapi.ParseID(NodeIDPrefix, *req.ParentID, "node")
		if err != nil {
			return n, pmapi.Invalid("parentId", "parentId must be a node of this analysis")
		}
		n.parent = &p
	}
	return n, nil
}

// ref is a row under the analysis the path names, by a second path parameter.
type ref struct {
	id, sub uuid.UUID
	raw     string // the second parameter as given
}

// readRef reads the analysis and the row param names (prefix, noun).
func readRef(c *fiber.Ctx, param, prefix, noun string) (ref, error) {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return ref{}, err
	}
	raw := c.Params(param)
	sub, err := pmapi.ParseID(prefix, raw, noun)
	return ref{id, sub, raw}, err
}

func readNode(c *fiber.Ctx) (ref, error) { return readRef(c, "nodeId", NodeIDPrefix, "node") }

func readRun(c *fiber.Ctx) (ref, error) { return readRef(c, "runId", RunIDPrefix, "suggestion run") }

type corrective struct {
	id, node uuid.UUID
	item     actionitem.NewItem
}

func readCorrective(c *fiber.Ctx) (corrective, error) {
	id, req, err := withAnalysis(c, api.DecodeBody[CorrectiveRequest])
	if err != nil {
		return corrective{}, err
	}
	node, err := pmapi.ParseID(NodeIDPrefix, req.NodeID, "node")
	if err != nil {
		return corrective{}, pmapi.Invalid("nodeId", "nodeId must be a ROOT_CAUSE node of this analysis")
	}
	item, err := actionitem.ParseCreate(actionitem.CreateRequest{Title: req.Title, Description: req.Description, OwnerHint: req.OwnerHint, DueDate: req.DueDate})
	return corrective{id, node, item}, err
}

func readSimilar(c *fiber.Ctx) (api.Target[int], error) {
	id, q, err := withAnalysis(c, api.DecodeQuery[SimilarQuery])
	return api.Target[int]{ID: id, Change: q.Limit}, err
}

// decision is an apply's or a reject's suggestion and body.
type decision[Req any] struct {
	ref
	req Req
}

func readDecision[Req any](c *fiber.Ctx, decode func(*fiber.Ctx) (Req, error)) (decision[Req], error) {
	r, err := readRef(c, "suggestionId", SuggestionIDPrefix, "suggestion")
	if err != nil {
		return decision[Req]{}, err
	}
	req, err := decode(c)
	return decision[Req]{r, req}, err
}

func readApply(c *fiber.Ctx) (decision[ApplyRequest], error) {
	d, err := readDecision(c, api.DecodeOptionalBody[ApplyRequest])
	if err != nil {
		return d, err
	}
	return d, actionitem.ValidOwnerHint(d.req.OwnerHint)
}

func readReject(c *fiber.Ctx) (decision[RejectRequest], error) {
	d, err := readDecision(c, api.DecodeBody[RejectRequest])
	if err != nil {
		return d, err
	}
	return d, validate.Text("reason", d.req.Reason, 2000)
}

// Calling the store with what was read.

func (h handlers) update(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in update) (Analysis, error) {
	return h.analyses.Update(ctx, shard, ws, in.id, in.title, in.problem)
}

func (h handlers) advance(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in advance) (Analysis, error) {
	return h.analyses.Advance(ctx, shard, ws, in.id, in.to, in.actor)
}

func (h handlers) addNode(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in newNode) (Node, error) {
	return h.analyses.AddNode(ctx, shard, ws, in.id, in.kind, in.text, in.parent)
}

func (h handlers) deleteNode(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, n ref) (NodeDeleted, error) {
	removed, err := h.analyses.DeleteNode(ctx, shard, ws, n.id, n.sub)
	return NodeDeleted{ID: n.raw, Deleted: api.Views(removed, func(id uuid.UUID) string { return pmapi.FormatID(NodeIDPrefix, id) })}, err
}

func (h handlers) acceptNode(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, n ref) (Node, error) {
	return h.analyses.AcceptSuggestion(ctx, shard, ws, n.id, n.sub)
}

func (h handlers) addCorrective(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in corrective) (CorrectiveCreated, error) {
	ca, it, err := h.analyses.AddCorrective(ctx, shard, ws, in.id, in.node, in.item)
	if err != nil {
		return CorrectiveCreated{}, err
	}
	return CorrectiveCreated{CorrectiveAction: ToCorrectiveView(ca), ActionItem: actionitem.ToView(it)}, nil
}

func (h handlers) getRun(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, r ref) (RunView, error) {
	run, nodes, err := h.analyses.GetRun(ctx, shard, ws, r.id, r.sub)
	if err != nil {
		return RunView{}, err
	}
	return ToRunView(run, nodes), nil
}

func (h handlers) apply(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, d decision[ApplyRequest]) (Applied, error) {
	v, items, err := h.analyses.Apply(ctx, shard, ws, d.id, d.sub, d.req.OwnerHint, d.req.DueDate)
	return Applied{Suggestion: v, ActionItems: api.Views(items, actionitem.ToView)}, err
}

func (h handlers) reject(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, d decision[RejectRequest]) (SuggestionView, error) {
	return h.analyses.Reject(ctx, shard, ws, d.id, d.sub, d.req.Reason)
}
