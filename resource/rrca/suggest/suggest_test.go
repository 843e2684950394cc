package suggest

import (
	"context"
	"strings"
	"testing"
)

func terms(s string) []string { return strings.Fields(strings.ToLower(s)) }

func node(id, kind string, depth int, text string) Node {
	return Node{ID: id, Kind: kind, Depth: depth, Text: text, Terms: terms(text)}
}

// TestFiveWhyRanksCausesAcrossAnalysesAndLeavesOutRestatements: the next
// why comes from the similar analyses close to the best one; a WHY at the
// analysis's own depth, or one saying what it has, is no suggestion; two
// analyses saying the same cause give one suggestion with both as evidence.
func TestFiveWhyRanksCausesAcrossAnalysesAndLeavesOutRestatements(t *testing.T) {
	in := WhyInput{
		ProblemTerms: terms("press seal leak hydraulic oil"),
		Own:          []Node{node("q1", "WHY", 1, "seal lip cut fitting")},
		Existing:     []string{"seal lip cut fitting"},
		Similar: []Similar{
			{ID: "a", Score: 0.6, Nodes: []Node{node("a1", "WHY", 1, "seal lip damaged fitting"),
				node("a2", "WHY", 2, "groove edge sharp sleeve missing"),
				node("a3", "ROOT_CAUSE", 0, "installation sleeve unused")}},
			{ID: "b", Score: 0.5, Nodes: []Node{node("b2", "WHY", 2, "sharp groove edge sleeve missing")}},
			{ID: "far", Score: 0.1, Nodes: []Node{node("f1", "ROOT_CAUSE", 0, "filter bypass stuck open")}},
		},
	}
	got, err := Deterministic{}.FiveWhy(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Text != "groove edge sharp sleeve missing" || len(got[0].Evidence) != 2 {
		t.Fatalf("first suggestion %+v, want the groove edge with evidence from a and b", got)
	}
	for _, w := range got {
		if strings.Contains(w.Text, "damaged") || strings.Contains(w.Text, "filter") {
			t.Errorf("suggested %q: a restatement or an analysis far from the best", w.Text)
		}
		if w.Confidence < 0.6 {
			t.Errorf("%q suggested at confidence %.2f", w.Text, w.Confidence)
		}
	}
}

// TestFiveWhySaysNothingWhenCloseAnalysesDisagree: two analyses alike to the
// problem with different mechanisms leave no cause with most of the weight.
func TestFiveWhySaysNothingWhenCloseAnalysesDisagree(t *testing.T) {
	got, _ := Deterministic{}.FiveWhy(context.Background(), WhyInput{
		ProblemTerms: terms("cache misses database overload"),
		Similar: []Similar{
			{ID: "a", Score: 0.5, Nodes: []Node{node("a1", "ROOT_CAUSE", 0, "same ttl expiry stampede")}},
			{ID: "b", Score: 0.48, Nodes: []Node{node("b1", "ROOT_CAUSE", 0, "keys without expiry evicted")}},
		},
	})
	if len(got) != 0 {
		t.Fatalf("%+v, want nothing", got)
	}
}

func TestLookAcrossKeepsProjectsWithEvidence(t *testing.T) {
	got, _ := Deterministic{}.LookAcross(context.Background(), LookAcrossInput{
		RootCauses: []string{"no torque check gland nut"}, Actions: []string{"add torque check"},
		Mechanism: []Node{node("r", "ROOT_CAUSE", 0, "no torque check gland nut")},
		Symptom:   terms("press leak"),
		Projects: []ProjectCandidates{
			{ProjectID: "weak", Items: []Candidate{{Title: "press leak again", Terms: terms("press leak again")}}},
			{ProjectID: "strong", Items: []Candidate{{Title: "gland nut torque unchecked",
				Terms: terms("gland nut torque unchecked")}}},
			{ProjectID: "empty"},
		},
	})
	if len(got) != 1 || got[0].ProjectID != "strong" || got[0].Evidence[0].Matched != "no torque check gland nut" ||
		got[0].Actions[0] != "add torque check" {
		t.Fatalf("%+v", got)
	}
}

// TestScoreIsSymmetricToTheLastBit: one recomputation writes both directions
// of a pair, so either analysis's job must write the same score.
func TestScoreIsSymmetricToTheLastBit(t *testing.T) {
	a := NewProfile([]Text{{Kind: "TITLE", Terms: terms("press seal leak")},
		{Kind: "WHY", Depth: 1, Terms: terms("seal lip cut")}, {Kind: "ROOT_CAUSE", Terms: terms("no sleeve used")}})
	b := NewProfile([]Text{{Kind: "TITLE", Terms: terms("seal leak on press")},
		{Kind: "WHY", Depth: 1, Terms: terms("lip cut fitting")}})
	if x, y := Score(a, b), Score(b, a); x != y || x <= 0 {
		t.Fatalf("Score(a, b) = %v, Score(b, a) = %v", x, y)
	}
}
