// Package suggest holds the suggestion engines of root-cause analyses behind one
// interface: given the candidates the database found (why-chains of similar
// analyses, the workspace's risks and tasks, other projects' records matching a
// root cause), an engine picks 5-why suggestions and look-across suggestions.
// The default engine is deterministic and needs no network; a language-model
// engine can implement the same interface.
package suggest

import (
	"context"
	"sort"
	"strings"
)

// Candidate is a text the database found, with where it came from and how well
// it matched (0 to 1).
type Candidate struct {
	Type  string  `json:"type"` // "rrca", "risk", "task", "node"
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
}

// WhyInput is what a 5-why suggestion needs.
type WhyInput struct {
	Problem string
	// Chain holds the texts of the deepest why chain, top first.
	Chain []string
	// Existing holds every node text of the analysis, to avoid repeats.
	Existing   []string
	Candidates []Candidate
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
	Actions    []string // titles of the analysis's corrective actions
	Projects   []ProjectCandidates
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
	FiveWhy(ctx context.Context, in WhyInput) ([]string, error)
	LookAcross(ctx context.Context, in LookAcrossInput) ([]Suggestion, error)
}

// Deterministic is the default engine: retrieval ranked by the database's
// similarity scores, no randomness, no network.
type Deterministic struct {
	// MaxWhys is how many why suggestions a run writes (default 3).
	MaxWhys int
	// MinWhyScore is the score a candidate needs to be suggested as a why
	// (default 0.1): a record sharing no term with the problem only reaches
	// about 0.05 through trigram noise and is no suggestion.
	MinWhyScore float64
	// MinEvidence is the score a project's best record needs for a look-across
	// suggestion (default 0.25).
	MinEvidence float64
}

func normal(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// FiveWhy picks the best-scoring candidate texts not already in the analysis,
// leaving out those scoring under MinWhyScore.
func (d Deterministic) FiveWhy(_ context.Context, in WhyInput) ([]string, error) {
	max := d.MaxWhys
	if max <= 0 {
		max = 3
	}
	minScore := d.MinWhyScore
	if minScore <= 0 {
		minScore = 0.1
	}
	seen := map[string]bool{}
	for _, e := range in.Existing {
		seen[normal(e)] = true
	}
	cands := append([]Candidate(nil), in.Candidates...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	var out []string
	for _, c := range cands {
		if c.Score < minScore {
			break // sorted: the rest score lower
		}
		k := normal(c.Title)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c.Title)
		if len(out) == max {
			break
		}
	}
	return out, nil
}

// LookAcross proposes one suggestion per project whose best record clears
// MinEvidence, carrying its five best records and every corrective action.
func (d Deterministic) LookAcross(_ context.Context, in LookAcrossInput) ([]Suggestion, error) {
	min := d.MinEvidence
	if min <= 0 {
		min = 0.25
	}
	mechanism := strings.Join(in.RootCauses, "; ")
	var out []Suggestion
	for _, p := range in.Projects {
		items := append([]Candidate(nil), p.Items...)
		sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
		if len(items) == 0 || items[0].Score < min {
			continue
		}
		if len(items) > 5 {
			items = items[:5]
		}
		out = append(out, Suggestion{ProjectID: p.ProjectID, Mechanism: mechanism, Evidence: items, Actions: in.Actions, Score: items[0].Score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}
