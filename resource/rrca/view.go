package rrca

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
)

// View is an analysis in lists and event payloads.
type View struct {
	ID               string     `json:"id" example:"rca_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	Title            string     `json:"title"`
	ProblemStatement string     `json:"problemStatement"`
	ProjectID        *string    `json:"projectId"`
	SourceRiskID     *string    `json:"sourceRiskId" doc:"The risk the analysis was started from, if any"`
	Phase            string     `json:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	NodeCount        int        `json:"nodeCount"`
	CreatedAt        time.Time  `json:"createdAt"`
	UpdatedAt        time.Time  `json:"updatedAt"`
	ArchivedAt       *time.Time `json:"archivedAt"`
}

// ToView converts a stored analysis.
func ToView(a Analysis) View {
	return View{
		ID: pmapi.FormatID(IDPrefix, a.ID), Title: a.Title, ProblemStatement: a.ProblemStatement,
		ProjectID:    pmapi.FormatOptionalID(project.IDPrefix, a.ProjectID),
		SourceRiskID: pmapi.FormatOptionalID(risk.IDPrefix, a.SourceRiskID), Phase: a.Phase,
		NodeCount: a.NodeCount, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, ArchivedAt: a.ArchivedAt,
	}
}

// Detail is an analysis with its corrective actions and phase history.
type Detail struct {
	View
	CorrectiveActions []CorrectiveActionView `json:"correctiveActions"`
	PhaseHistory      []PhaseChange          `json:"phaseHistory"`
}

// ToDetail converts an analysis with its corrective actions and history.
func ToDetail(f Full) Detail {
	return Detail{View: ToView(f.Analysis), CorrectiveActions: api.Views(f.Correctives, ToCorrectiveView),
		PhaseHistory: append([]PhaseChange{}, f.History...)}
}

// List is a page of analyses.
type List api.PageOf[View]

// NodeView is one node.
type NodeView struct {
	ID              string    `json:"id" example:"nod_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	RRCAID          string    `json:"rrcaId"`
	ParentID        *string   `json:"parentId"`
	Kind            string    `json:"kind" enum:"PROBLEM,WHY,CAUSE,ROOT_CAUSE,CONTRIBUTING_FACTOR,ESCAPE_POINT,EVIDENCE,WHY_SUGGESTION" enumName:"RrcaNodeKind"`
	Text            string    `json:"text"`
	SuggestionRunID *string   `json:"suggestionRunId" doc:"For WHY_SUGGESTION nodes: the 5-why run that wrote it"`
	CreatedAt       time.Time `json:"createdAt"`
}

// ToNodeView converts a node.
func ToNodeView(n Node) NodeView {
	return NodeView{ID: pmapi.FormatID(NodeIDPrefix, n.ID), RRCAID: pmapi.FormatID(IDPrefix, n.RRCAID),
		ParentID: pmapi.FormatOptionalID(NodeIDPrefix, n.ParentID), Kind: n.Kind, Text: n.Text,
		SuggestionRunID: pmapi.FormatOptionalID(RunIDPrefix, n.SuggestionRunID), CreatedAt: n.CreatedAt}
}

// NodeList is an analysis's nodes (a tree through parentId), oldest first.
type NodeList api.PageOf[NodeView]

func nodeKey(n Node) string { return n.ID.String() }

// CorrectiveActionView is a corrective action with its action item's status.
type CorrectiveActionView struct {
	ID               string    `json:"id" example:"cac_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	RRCAID           string    `json:"rrcaId"`
	NodeID           *string   `json:"nodeId" doc:"The ROOT_CAUSE node it corrects"`
	ActionItemID     *string   `json:"actionItemId" doc:"The action item it created (source CORRECTIVE_ACTION); null if that item was deleted"`
	ActionItemStatus *string   `json:"actionItemStatus" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	Title            string    `json:"title"`
	CreatedAt        time.Time `json:"createdAt"`
}

// ToCorrectiveView converts a corrective action.
func ToCorrectiveView(c CorrectiveAction) CorrectiveActionView {
	return CorrectiveActionView{ID: pmapi.FormatID(CorrectivePrefix, c.ID), RRCAID: pmapi.FormatID(IDPrefix, c.RRCAID),
		NodeID:       pmapi.FormatOptionalID(NodeIDPrefix, c.NodeID),
		ActionItemID: pmapi.FormatOptionalID(actionitem.IDPrefix, c.ActionItemID), ActionItemStatus: c.ItemStatus,
		Title: c.Title, CreatedAt: c.CreatedAt}
}

// CorrectiveActionList lists an analysis's corrective actions.
type CorrectiveActionList api.PageOf[CorrectiveActionView]

func correctiveKey(ca CorrectiveAction) string { return ca.ID.String() }

// CreateRequest starts an analysis, from scratch or from a risk.
type CreateRequest struct {
	Title            string  `json:"title,omitempty" doc:"Required unless sourceRiskId is given (then the risk's title is the default)"`
	ProblemStatement *string `json:"problemStatement,omitempty" doc:"With sourceRiskId and no statement, the risk's title and description"`
	ProjectID        *string `json:"projectId,omitempty" doc:"Defaults to the source risk's project"`
	SourceRiskID     *string `json:"sourceRiskId,omitempty"`
}

// UpdateRequest edits an analysis's text.
type UpdateRequest struct {
	Title            *string `json:"title,omitempty"`
	ProblemStatement *string `json:"problemStatement,omitempty"`
}

// AdvanceRequest moves an analysis to its next phase; the body may be left out.
type AdvanceRequest struct {
	To string `json:"to,omitempty" enum:"CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED" doc:"Optional guard: must be the next phase"`
}

// NodeRequest creates a node.
type NodeRequest struct {
	Kind     string  `json:"kind" enum:"PROBLEM,WHY,CAUSE,ROOT_CAUSE,CONTRIBUTING_FACTOR,ESCAPE_POINT,EVIDENCE" enumName:"RrcaNewNodeKind"`
	Text     string  `json:"text"`
	ParentID *string `json:"parentId,omitempty" doc:"A node of the same analysis; omitted for a top-level node"`
}

// NodeDeleted answers a node delete.
type NodeDeleted struct {
	ID      string   `json:"id"`
	Deleted []string `json:"deleted" doc:"Every node removed: the node and its whole subtree"`
}

// CorrectiveRequest emits a corrective action from a ROOT_CAUSE node: it creates
// an action item (source CORRECTIVE_ACTION) linked both ways.
type CorrectiveRequest struct {
	NodeID      string     `json:"nodeId" doc:"A ROOT_CAUSE node of this analysis"`
	Title       string     `json:"title"`
	Description *string    `json:"description,omitempty"`
	OwnerHint   *string    `json:"ownerHint,omitempty"`
	DueDate     *time.Time `json:"dueDate,omitempty"`
}

// CorrectiveCreated answers a corrective action: it and its action item.
type CorrectiveCreated struct {
	CorrectiveAction CorrectiveActionView `json:"correctiveAction"`
	ActionItem       actionitem.View      `json:"actionItem"`
}

// PhaseEvent is the data of rrca.advanced.
type PhaseEvent struct {
	RRCAID string `json:"rrcaId"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// NodeEvent is the data of rrca.node_added and rrca.node_deleted.
type NodeEvent struct {
	RRCAID string   `json:"rrcaId"`
	NodeID string   `json:"nodeId"`
	Kind   string   `json:"kind"`
	Nodes  []string `json:"nodes,omitempty" doc:"For deletes: every node of the removed subtree"`
}
