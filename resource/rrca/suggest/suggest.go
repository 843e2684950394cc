// Package suggest holds the suggestion engines of root-cause analyses behind one
// interface: given what the database found (the nodes of similar analyses with
// their scores, the workspace's risks and tasks, other projects' records
// matching a mechanism), an engine picks 5-why suggestions and look-across
// suggestions, each with its evidence. The default engine is deterministic
// and needs no network; a language-model or embedding engine can implement
// the same interface. The package also holds the profile both the similar
// analyses' ranking and the deterministic engine compare texts by
// (profile.go).
package suggest

import (
	"context"
	"strings"
)

// Candidate is a record the database found, with where it came from and how
// well it matched (0 to 1).
type Candidate struct {
	Type  string  `json:"type" enum:"rrca,node,risk,task"`
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// RRCAID is the analysis a node belongs to.
	RRCAID string `json:"rrcaId,omitempty" doc:"The analysis of a node"`
	// Matched is the text of the analysis's own node (a root cause or a
	// contributing factor) this record matched.
	Matched string `json:"matched,omitempty" doc:"The root cause or contributing factor this record matched"`
	// Terms are the record's lexemes, for the engine; never shown.
	Terms []string `json:"-"`
}

// Node is a node of an analysis as an engine sees it: its kind, its depth in
// the why chain (WHYs; 1 for a top one), its text and its lexemes.
type Node struct {
	ID    string
	Kind  string
	Depth int
	Text  string
	Terms []string
}

// Similar is an analysis similar to the one asking, with its score and the
// nodes that say why its problem happened.
type Similar struct {
	ID    string
	Title string
	Score float64
	Nodes []Node
}

// WhyInput is what a 5-why suggestion needs.
type WhyInput struct {
	Problem string
	// ProblemTerms are the lexemes of the title and problem statement.
	ProblemTerms []string
	// Chain holds the texts of the deepest why chain, top first.
	Chain []string
	// Existing holds every node text of the analysis, to avoid repeats;
	// Own holds the same nodes with kinds, depths and lexemes.
	Existing []string
	Own      []Node
	// Similar are the analysis's neighbours, best first.
	Similar []Similar
	// Candidates are the workspace's risks and tasks that match the problem.
	Candidates []Candidate
}

// Why is one 5-why suggestion: the text to add as a WHY_SUGGESTION, how
// confident the engine is (0 to 1) and what it rests on.
type Why struct {
	Text       string
	Confidence float64
	Evidence   []Candidate
}

// ProjectCandidates is one other project with its records matching the
// analysis's root causes.
type ProjectCandidates struct {
	ProjectID string
	Name      string
	Items     []Candidate
}

// LookAcrossInput is what a look-across suggestion needs.
type LookAcrossInput struct {
	RootCauses []string
	// Mechanism are the analysis's root causes and contributing factors with
	// their lexemes; Symptom the lexemes of its title and problem statement.
	Mechanism []Node
	Symptom   []string
	Actions   []string // titles of the analysis's corrective actions
	Projects  []ProjectCandidates
}

// Suggestion is one look-across suggestion for one target project.
type Suggestion struct {
	ProjectID string
	Mechanism string
	Evidence  []Candidate
	Actions   []string
	Score     float64
}

// Engine proposes suggestions.
type Engine interface {
	FiveWhy(ctx context.Context, in WhyInput) ([]Why, error)
	LookAcross(ctx context.Context, in LookAcrossInput) ([]Suggestion, error)
}

// Deterministic is the default engine: retrieval ranked by the database's
// similarity scores and the profiles' term weights, no randomness, no
// network. Its zero value has the tuned defaults.
type Deterministic struct {
	// MaxWhys is how many why suggestions a run writes (default 3).
	MaxWhys int
	// MinConfidence is the share of the similar analyses' weight a why must
	// carry to be suggested (default 0.7): below it the engine says nothing.
	MinConfidence float64
	// Reach keeps the similar analyses scoring at least this share of the
	// best one's (default 0.4): the ones a suggestion may draw on and its
	// confidence is measured against.
	Reach float64
	// MinEvidence is the score a project's best record needs for a
	// look-across suggestion (default 0.45, tuned on the quality benchmark).
	MinEvidence float64
}

func normal(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
