package rrca

import (
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
)

// ListQuery documents and decodes the analysis list's parameters.
type ListQuery struct {
	api.ListQuery
	api.SyncQuery
	Phase           string     `query:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	ProjectID       *uuid.UUID `query:"projectId" id:"project"`
	SourceRiskID    *uuid.UUID `query:"sourceRiskId" id:"risk"`
	IncludeArchived bool       `query:"includeArchived"`
}

// routes are the analyses' operations, REST-shaped under one base.
var routes = route.Set{Name: "rrca", Tag: "Root-cause analysis (RRCA)", Base: "/openapi/v1/resource/rrca",
	Read: "rrca:read", Write: "rrca:write"}

// Resource registers root-cause analyses with the server. Corrective actions
// and look-across applies create action items through items.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: Tables, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "rrca_analyses", Event: "rrca.deleted",
			IDPrefix: IDPrefix, IDField: "rrcaId", Remove: RemoveInProject},
		TagDoc: "Rapid root-cause analyses: phases DEFINE to CLOSED with gates, a cause tree, corrective actions, " +
			"similar analyses, 5-why and look-across suggestions.",
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
	return []api.Operation{
		{Method: http.MethodGet, Path: "", ID: "listRRCA",
			Summary: "Analyses, newest first",
			Query:   ListQuery{}, Result: List{},
			Handler: route.List("rrca", api.DecodeSync[ListQuery], filter, h.analyses.List)},
		{Method: http.MethodPost, Path: "", ID: "createRRCA", Idempotent: true,
			Summary: "Start an analysis, from scratch or from a risk (sourceRiskId copies its title and description)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Create(parseCreate, h.analyses.Create, ToView)},
		{Method: http.MethodGet, Path: one, ID: "getRRCA",
			Summary: "One analysis with node count, corrective actions and phase history",
			Result:  Detail{}, Handler: route.Get(inPath, h.analyses.Detail, ToDetail)},
		{Method: http.MethodPatch, Path: one, ID: "updateRRCA", IfMatch: true,
			Summary: "Edit an analysis's title or problem statement",
			Body:    UpdateRequest{}, Result: View{}, Status: http.StatusOK, Handler: h.update},
		{Method: http.MethodPost, Path: one + "/advance", ID: "advanceRRCA", IfMatch: true,
			Fails:   []pmapi.Code{pmapi.CodeInvalidTransition, pmapi.CodeGateNotMet, pmapi.CodeConflict},
			Summary: "Move to the next phase (409 GATE_NOT_MET naming the gate)",
			Body:    AdvanceRequest{}, Result: View{}, Handler: h.advance},
		{Method: http.MethodPost, Path: one + "/archive", ID: "archiveRRCA", IfMatch: true,
			Summary: "Archive an analysis",
			Result:  View{}, Handler: route.Archive(inPath, h.analyses.SetArchived, ToView, true)},
		{Method: http.MethodPost, Path: one + "/restore", ID: "restoreRRCA", IfMatch: true,
			Summary: "Restore an archived analysis",
			Result:  View{}, Handler: route.Archive(inPath, h.analyses.SetArchived, ToView, false)},
		{Method: http.MethodGet, Path: one + "/nodes", ID: "listRRCANodes",
			Summary: "The analysis's nodes (a tree through parentId)",
			Query:   NodeListQuery{}, Result: NodeList{}, Handler: h.listNodes},
		{Method: http.MethodPost, Path: one + "/nodes", ID: "createRRCANode", Idempotent: true,
			Summary: "Add a node",
			Body:    NodeRequest{}, Result: NodeView{}, Handler: h.addNode},
		{Method: http.MethodDelete, Path: one + "/nodes/{nodeId}", ID: "deleteRRCANode",
			Fails:   []pmapi.Code{pmapi.CodeGateNotMet},
			Summary: "Delete a node and its whole subtree (past ANALYZE, not the last ROOT_CAUSE: 409 GATE_NOT_MET)",
			Result:  NodeDeleted{}, Status: http.StatusOK, Handler: h.deleteNode},
		{Method: http.MethodPost, Path: one + "/nodes/{nodeId}/accept", ID: "acceptRRCANode",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Summary: "Accept a WHY_SUGGESTION node: it becomes a WHY",
			Result:  NodeView{}, Handler: h.acceptNode},
		{Method: http.MethodPost, Path: one + "/corrective-actions", ID: "createCorrectiveAction", Idempotent: true,
			Summary: "Emit a corrective action from a ROOT_CAUSE node: " +
				"creates an action item (source CORRECTIVE_ACTION), linked both ways",
			Body: CorrectiveRequest{}, Result: CorrectiveCreated{}, Handler: h.addCorrective},
		{Method: http.MethodGet, Path: one + "/corrective-actions", ID: "listCorrectiveActions",
			Summary: "The analysis's corrective actions with their items' status",
			Query:   api.ListQuery{}, Result: CorrectiveActionList{}, Handler: h.listCorrectives},
		{Method: http.MethodGet, Path: one + "/similar", ID: "listSimilarRRCA",
			Summary: "Other analyses ranked by text similarity " +
				"(recomputed by a job after each change; pending says one is queued)",
			Query: SimilarQuery{}, Result: SimilarList{}, Handler: h.similar},
		{Method: http.MethodPost, Path: one + "/5why/suggest", ID: "suggestFiveWhy",
			Summary: "Start a 5-why suggestion run; its WHY_SUGGESTION nodes appear under the deepest WHY when READY",
			Result:  RunView{}, Handler: h.startRun(RunFiveWhy)},
		{Method: http.MethodGet, Path: one + "/5why/suggestions/{runId}", ID: "getFiveWhyRun",
			Summary: "A 5-why run and the nodes it wrote",
			Result:  RunView{}, Handler: h.getRun},
		{Method: http.MethodGet, Path: one + "/look-across", ID: "listLookAcross",
			Summary: "Look-across (yokoten) suggestions: other projects with the same failure mechanism, best first",
			Query:   api.ListQuery{}, Result: SuggestionList{}, Handler: h.listLookAcross},
		{Method: http.MethodPost, Path: one + "/look-across/suggest", ID: "suggestLookAcross",
			Summary: "Start a look-across run over every other project of the workspace",
			Result:  RunView{}, Handler: h.startRun(RunLookAcross)},
		{Method: http.MethodGet, Path: one + "/look-across/runs/{runId}", ID: "getLookAcrossRun",
			Summary: "A look-across run's status",
			Result:  RunView{}, Handler: h.getRun},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/apply", ID: "applyLookAcross",
			Fails: []pmapi.Code{pmapi.CodeConflict},
			Summary: "Apply a suggestion: " +
				"create its corrective actions as action items (source LOOK_ACROSS) in the target project",
			Body: ApplyRequest{}, Result: Applied{}, Handler: h.apply},
		{Method: http.MethodPost, Path: one + "/look-across/{suggestionId}/reject", ID: "rejectLookAcross",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Summary: "Reject a suggestion with a reason",
			Body:    RejectRequest{}, Result: SuggestionView{}, Handler: h.reject},
	}
}

// Every route below /{rrcaId} reads the analysis from the path first, then
// what else the path, the query and the body give, in that order.

// filter is the store's filter of a list's query, asking for one row past
// the page.
func filter(q ListQuery, k api.Keyset) (Filter, int) {
	return Filter{Phase: q.Phase, ProjectID: q.ProjectID, SourceRiskID: q.SourceRiskID,
		IncludeArchived: q.IncludeArchived, Page: k, Limit: q.Limit + 1}, q.Limit
}

// inPath reads the analysis the path names.
var inPath = route.InPath("rrcaId", ParseID)

// parseCreate reads a new analysis: a title unless it comes from a risk.
func parseCreate(req CreateRequest) (NewAnalysis, error) {
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

func (h handlers) update(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[UpdateRequest](c)
	if err != nil {
		return err
	}
	if req.Title != nil {
		title, err := ValidTitle(*req.Title)
		if err != nil {
			return err
		}
		req.Title = &title
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
	return api.OK(c, ToView(a))
}

// advance moves the analysis to its next phase, by the caller.
func (h handlers) advance(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
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

func (h handlers) listNodes(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return err
	}
	q, err := api.DecodeQuery[NodeListQuery](c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	nodes, err := h.analyses.Nodes(c.UserContext(), shard, ws, id, q.Kind)
	if err != nil {
		return err
	}
	nodes, next, err := api.PageIn(c, "rrca-nodes", nodes, nodeKey)
	if err != nil {
		return err
	}
	return api.OK(c, NodeList{Items: api.Views(nodes, ToNodeView), NextCursor: next})
}

func (h handlers) addNode(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
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

// deleteNode deletes the node the path names with its subtree, answering
// with the id as given and every node's that went.
func (h handlers) deleteNode(c *fiber.Ctx) error {
	id, node, raw, err := pathRow(c, "nodeId", NodeIDPrefix, "node")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	removed, err := h.analyses.DeleteNode(c.UserContext(), shard, ws, id, node)
	if err != nil {
		return err
	}
	return api.OK(c, NodeDeleted{ID: raw, Deleted: api.Views(removed, formatNodeID)})
}

func formatNodeID(id uuid.UUID) string { return pmapi.FormatID(NodeIDPrefix, id) }

func (h handlers) acceptNode(c *fiber.Ctx) error {
	id, node, _, err := pathRow(c, "nodeId", NodeIDPrefix, "node")
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

// addCorrective makes an action item from the ROOT_CAUSE node the body names.
func (h handlers) addCorrective(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
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
	item, err := actionitem.ParseCreate(actionitem.CreateRequest{Title: req.Title, Description: req.Description,
		OwnerHint: req.OwnerHint, DueDate: req.DueDate})
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

func (h handlers) listCorrectives(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	correctives, err := h.analyses.Correctives(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	correctives, next, err := api.PageIn(c, "rrca-corrective", correctives, correctiveKey)
	if err != nil {
		return err
	}
	return api.OK(c, CorrectiveActionList{Items: api.Views(correctives, ToCorrectiveView), NextCursor: next})
}

func (h handlers) similar(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return err
	}
	q, err := api.DecodeQuery[SimilarQuery](c)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	similar, err := h.analyses.Similar(c.UserContext(), shard, ws, id, q.Limit)
	if err != nil {
		return err
	}
	return api.OK(c, similar)
}

// startRun queues a suggestion run of kind (RunFiveWhy, RunLookAcross).
func (h handlers) startRun(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := ParseID(c.Params("rrcaId"))
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		run, err := h.analyses.CreateRun(c.UserContext(), shard, ws, id, kind)
		if err != nil {
			return err
		}
		return api.Created(c, toNewRunView(run))
	}
}

// getRun answers the run the path names, of either kind.
func (h handlers) getRun(c *fiber.Ctx) error {
	id, runID, _, err := pathRow(c, "runId", RunIDPrefix, "suggestion run")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	run, nodes, err := h.analyses.GetRun(c.UserContext(), shard, ws, id, runID)
	if err != nil {
		return err
	}
	return api.OK(c, ToRunView(run, nodes))
}

func (h handlers) listLookAcross(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("rrcaId"))
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	suggestions, err := h.analyses.Suggestions(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	suggestions, next, err := api.PageIn(c, "rrca-look-across", suggestions, suggestionKey)
	if err != nil {
		return err
	}
	return api.OK(c, SuggestionList{Items: suggestions, NextCursor: next})
}

// apply creates the suggestion's corrective actions as action items.
func (h handlers) apply(c *fiber.Ctx) error {
	id, sug, _, err := pathRow(c, "suggestionId", SuggestionIDPrefix, "suggestion")
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
	return api.Created(c, Applied{Suggestion: v, ActionItems: api.Views(items, actionitem.ToView)})
}

func (h handlers) reject(c *fiber.Ctx) error {
	id, sug, _, err := pathRow(c, "suggestionId", SuggestionIDPrefix, "suggestion")
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[RejectRequest](c)
	if err != nil {
		return err
	}
	if err := validate.Text("reason", req.Reason, 2000); err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	v, err := h.analyses.Reject(c.UserContext(), shard, ws, id, sug, req.Reason)
	if err != nil {
		return err
	}
	return api.Created(c, v)
}

// pathRow reads the analysis the path names and the row under it its
// parameter param names (an id with prefix, of a noun), and that id as given.
func pathRow(c *fiber.Ctx, param, prefix, noun string) (id, row uuid.UUID, raw string, err error) {
	if id, err = ParseID(c.Params("rrcaId")); err != nil {
		return id, row, "", err
	}
	raw = c.Params(param)
	row, err = pmapi.ParseID(prefix, raw, noun)
	return id, row, raw, err
}
