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

// TestScoreTellsAHardNegativeFromItsDecoy: an early analysis with the decoy's
// title and problem statement word for word, and a first WHY that starts like
// the decoy's but names another mechanism, is closer to the analysis of that
// mechanism (whose problem reads otherwise) than to the decoy. The former
// weights (symptoms 0.2 however alike, every shared mechanism term counted)
// put the decoy first.
func TestScoreTellsAHardNegativeFromItsDecoy(t *testing.T) {
	title, problem := terms("checkout pods restarting repeatedly"),
		terms("checkout pods restarting repeatedly sale restart dropped in-flight payments")
	decoy := NewProfile([]Text{{Kind: "TITLE", Terms: title}, {Kind: "STATEMENT", Terms: problem},
		{Kind: "WHY", Depth: 1, Terms: terms("checkout container killed restarted kernel reason oomkilled")},
		{Kind: "WHY", Depth: 2, Terms: terms("container exceeded 2 gib memory limit")},
		{Kind: "ROOT_CAUSE", Terms: terms("in-process session cache no size bound heap grew past memory limit")}})
	twin := NewProfile([]Text{{Kind: "TITLE", Terms: terms("search pods evicted from nodes")},
		{Kind: "STATEMENT", Terms: terms("search pods evicted nodes rescheduled 503 errors")},
		{Kind: "WHY", Depth: 1, Terms: terms("kubelet evicted pods node reported diskpressure")},
		{Kind: "WHY", Depth: 2, Terms: terms("ephemeral storage node 95 full")},
		{Kind: "ROOT_CAUSE", Terms: terms("debug logging container filesystem filled ephemeral storage kubelet evicted")}})
	early := NewProfile([]Text{{Kind: "TITLE", Terms: title}, {Kind: "STATEMENT", Terms: problem},
		{Kind: "WHY", Depth: 1, Terms: terms("checkout containers killed restarted kubelet evicted them node")}})
	if d, w := Score(early, decoy), Score(early, twin); w <= d {
		t.Fatalf("twin %.3f, decoy %.3f: want the twin first", w, d)
	}
}

// TestScoreLeavesOutMechanismTermsBothUseForTheirSymptoms: two WHYs that
// only restate the problem both analyses have in their statements are no
// shared mechanism.
func TestScoreLeavesOutMechanismTermsBothUseForTheirSymptoms(t *testing.T) {
	a := NewProfile([]Text{{Kind: "STATEMENT", Terms: terms("press seal leak oil")},
		{Kind: "WHY", Depth: 1, Terms: terms("press seal leak")}, {Kind: "ROOT_CAUSE", Terms: terms("sleeve missing")}})
	b := NewProfile([]Text{{Kind: "STATEMENT", Terms: terms("press seal leak oil")},
		{Kind: "WHY", Depth: 1, Terms: terms("press seal leak")}, {Kind: "ROOT_CAUSE", Terms: terms("filter bypass")}})
	if s := Score(a, b); s > 0.1 {
		t.Fatalf("score %.3f, want the symptoms' share alone (0.1)", s)
	}
}

// TestFiveWhyCountsOnlyAnalysesFurtherAlong: a close analysis that has
// nothing past the asking one's deepest WHY (another early analysis) neither
// suggests nor dilutes the others' support.
func TestFiveWhyCountsOnlyAnalysesFurtherAlong(t *testing.T) {
	got, _ := Deterministic{}.FiveWhy(context.Background(), WhyInput{
		ProblemTerms: terms("cache misses database overload"),
		Own:          []Node{node("q1", "WHY", 1, "redis evicted product keys")},
		Similar: []Similar{
			{ID: "early", Score: 0.6, Nodes: []Node{node("e1", "WHY", 1, "keys evicted from redis")}},
			{ID: "twin", Score: 0.5, Nodes: []Node{node("t2", "WHY", 2, "memory full of keys without expiry")}},
		},
	})
	if len(got) != 1 || got[0].Text != "memory full of keys without expiry" || got[0].Confidence != 1 {
		t.Fatalf("%+v, want the twin's next why at confidence 1", got)
	}
}

// TestSharedSumsAreExactInAnyOrder: a recomputation adds a candidate's
// shared terms in the order its postings arrive, and its score must still
// be the one the candidate's own recomputation writes. That holds while every
// weight a profile can carry is a multiple of 1/8 (sums and products of such
// weights are exact).
func TestSharedSumsAreExactInAnyOrder(t *testing.T) {
	for _, kind := range []string{"TITLE", "STATEMENT", "PROBLEM", "EVIDENCE", "WHY", "CAUSE", "ROOT_CAUSE",
		"CONTRIBUTING_FACTOR", "ESCAPE_POINT"} {
		for depth := range 8 {
			if _, w := Weight(kind, depth); w*8 != float64(int(w*8)) || w*echo*8 != float64(int(w*echo*8)) {
				t.Errorf("%s at depth %d weighs %v: not a multiple of 1/8", kind, depth, w)
			}
		}
	}
	a := NewProfile([]Text{{Kind: "TITLE", Terms: terms("press seal leak oil")},
		{Kind: "WHY", Depth: 1, Terms: terms("seal lip cut press")}, {Kind: "WHY", Depth: 2, Terms: terms("sleeve missing")},
		{Kind: "ROOT_CAUSE", Terms: terms("no sleeve used on fitting lip")}})
	b := NewProfile([]Text{{Kind: "TITLE", Terms: terms("seal leak on press line")},
		{Kind: "EVIDENCE", Terms: terms("oil on floor")},
		{Kind: "WHY", Depth: 1, Terms: terms("lip cut on fitting")}, {Kind: "CAUSE", Terms: terms("sleeve not used")}})
	var fwd, back Shared
	all := a.Terms()
	for i := range all {
		for _, x := range []struct {
			s *Shared
			t string
		}{{&fwd, all[i]}, {&back, all[len(all)-1-i]}} {
			x.s.Add(a.Symptom.W[x.t], a.Mechanism.W[x.t], b.Symptom.W[x.t], b.Mechanism.W[x.t])
		}
	}
	want := Score(a, b)
	if x, y := fwd.Score(a.Norms(), b.Norms()), back.Score(b.Norms(), a.Norms()); x != want || y != want || want <= 0 {
		t.Fatalf("Score %v; from shared sums in term order %v, in reverse %v", want, x, y)
	}
}
