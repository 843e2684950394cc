// Package rrca is the rapid root-cause analysis resource. An analysis moves
// forward through DEFINE -> CONTAIN -> ANALYZE -> CORRECT -> VERIFY -> CLOSED
// (describe the problem, contain it, find the root cause, correct it, verify the
// correction: the 8D discipline), never backwards, past gates: leaving ANALYZE
// needs a ROOT_CAUSE node, leaving CORRECT a corrective action, leaving VERIFY
// every corrective action's item DONE or CANCELLED.
package rrca

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// Id prefixes (resource/ids).
const (
	IDPrefix           = pmapi.RRCAIDPrefix
	NodeIDPrefix       = pmapi.RRCANodeIDPrefix
	CorrectivePrefix   = pmapi.CorrectiveActionIDPrefix
	SuggestionIDPrefix = pmapi.SuggestionIDPrefix
	RunIDPrefix        = pmapi.SuggestionRunIDPrefix
)

// Phases, in order.
const (
	Define  = "DEFINE"
	Contain = "CONTAIN"
	Analyze = "ANALYZE"
	Correct = "CORRECT"
	Verify  = "VERIFY"
	Closed  = "CLOSED"
)

// Phases lists the phases in their only order.
var Phases = []string{Define, Contain, Analyze, Correct, Verify, Closed}

// Next returns the phase after p, or "" after CLOSED.
func Next(p string) string {
	i := slices.Index(Phases, p)
	if i < 0 || i == len(Phases)-1 {
		return ""
	}
	return Phases[i+1]
}

// Gate names, as 409 GATE_NOT_MET details name them.
const (
	GateRootCause        = "ROOT_CAUSE_IDENTIFIED"
	GateCorrectiveAction = "CORRECTIVE_ACTION_DEFINED"
	GateActionsClosed    = "CORRECTIVE_ACTIONS_CLOSED"
)

// Facts is what the gates look at.
type Facts struct {
	RootCauses        int
	CorrectiveActions int
	// OpenActionItems are the ids of corrective actions' items not DONE or
	// CANCELLED (a corrective action whose item was deleted counts as open).
	OpenActionItems []string
}

// CheckAdvance decides a move from phase from. to may be empty (the next
// phase); anything but the next phase is refused: phases never go back or skip.
func CheckAdvance(from, to string, f Facts) (string, error) {
	next := Next(from)
	if next == "" {
		return "", pmapi.Errorf(pmapi.CodeConflict, "the analysis is CLOSED; it cannot advance")
	}
	if to != "" && to != next {
		if err := validate.OneOf("to", to, Phases); err != nil {
			return "", err
		}
		return "", pmapi.Errorf(pmapi.CodeInvalidTransition, "an analysis in %s can only advance to %s", from, next).
			With("from", from).With("to", to).With("allowed", []string{next})
	}
	gate := func(name, msg string) *pmapi.Error {
		return pmapi.Errorf(pmapi.CodeGateNotMet, "%s", msg).With("gate", name).With("from", from).With("to", next)
	}
	switch from {
	case Analyze:
		if f.RootCauses == 0 {
			return "", gate(GateRootCause, "leaving ANALYZE needs a ROOT_CAUSE node")
		}
	case Correct:
		if f.CorrectiveActions == 0 {
			return "", gate(GateCorrectiveAction, "leaving CORRECT needs a corrective action")
		}
	case Verify:
		if len(f.OpenActionItems) > 0 {
			return "", gate(GateActionsClosed, "leaving VERIFY needs every corrective action's item DONE or CANCELLED").
				With("openActionItems", f.OpenActionItems)
		}
	}
	return next, nil
}

// CheckNodeDelete refuses a node delete that would take the analysis's last
// ROOT_CAUSE once it has left ANALYZE, whose gate needed one: removing is how
// many ROOT_CAUSE nodes the subtree holds, of total.
func CheckNodeDelete(phase string, removing, total int) error {
	if removing == 0 || removing < total || slices.Index(Phases, phase) <= slices.Index(Phases, Analyze) {
		return nil
	}
	return pmapi.Errorf(pmapi.CodeGateNotMet, "the analysis is in %s, past ANALYZE: deleting this node "+
		"would remove its last ROOT_CAUSE; add another ROOT_CAUSE first", phase).
		With("gate", GateRootCause).
		With("phase", phase)
}

// Node kinds.
const (
	KindProblem            = "PROBLEM"
	KindWhy                = "WHY"
	KindCause              = "CAUSE"
	KindRootCause          = "ROOT_CAUSE"
	KindContributingFactor = "CONTRIBUTING_FACTOR"
	KindEscapePoint        = "ESCAPE_POINT"
	KindEvidence           = "EVIDENCE"
	KindWhySuggestion      = "WHY_SUGGESTION"
)

// NodeKinds lists every node kind.
var NodeKinds = []string{
	KindProblem,
	KindWhy,
	KindCause,
	KindRootCause,
	KindContributingFactor,
	KindEscapePoint,
	KindEvidence,
	KindWhySuggestion,
}

// ValidNewNode checks a node a caller creates: WHY_SUGGESTION nodes come only
// from the 5-why suggestion job.
func ValidNewNode(kind, text string) (string, error) { return nodeEntry.Check(kind, text) }

var nodeEntry = validate.Entry{
	ServerKind: KindWhySuggestion,
	ServerWhy:  "WHY_SUGGESTION nodes are written by 5-why suggest; accept one to make it a WHY",
	Kinds:      NodeKinds[:7],
	TextField:  "text",
	MaxText:    5000,
}

// ValidTitle trims and checks an analysis title.
func ValidTitle(s string) (string, error) { return validate.Title(s, 300) }

// ValidProblem checks a problem statement.
func ValidProblem(s string) error { return validate.Optional("problemStatement", &s, 20000) }

// Analysis is a stored analysis.
type Analysis struct {
	ID               uuid.UUID
	Title            string
	ProblemStatement string
	ProjectID        *uuid.UUID
	SourceRiskID     *uuid.UUID
	Phase            string
	NodeCount        int
	CreatedAt        time.Time
	UpdatedAt        time.Time
	ArchivedAt       *time.Time
}

// Node is one node of an analysis's tree.
type Node struct {
	ID              uuid.UUID
	RRCAID          uuid.UUID
	ParentID        *uuid.UUID
	Kind            string
	Text            string
	SuggestionRunID *uuid.UUID
	CreatedAt       time.Time
}

// CorrectiveAction ties a root cause to the action item it created.
type CorrectiveAction struct {
	ID           uuid.UUID
	RRCAID       uuid.UUID
	NodeID       *uuid.UUID
	ActionItemID *uuid.UUID
	Title        string
	ItemStatus   *string
	CreatedAt    time.Time
}

// PhaseChange is one entry of an analysis's phase history.
type PhaseChange struct {
	From  string    `json:"from"`
	To    string    `json:"to"`
	Actor string    `json:"actor"`
	At    time.Time `json:"at"`
}

// ParseID reads an analysis id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "analysis") }

// SearchSource makes analyses findable.
var SearchSource = facet.Search{
	Type: "rrca", Scope: "rrca:read", Table: "rrca_analyses", IDPrefix: IDPrefix,
	Title: "r.title", Body: "r.problem_statement", ProjectID: "r.project_id", Live: "r.archived_at is null",
	Fuzzy: []string{"r.title", "r.problem_statement"},
}
