package suggest

import (
	"context"
	"slices"
	"testing"
)

func TestFiveWhyPicksBestNewTexts(t *testing.T) {
	got, _ := Deterministic{MaxWhys: 2}.FiveWhy(context.Background(), WhyInput{
		Existing: []string{"Seal worn out"},
		Candidates: []Candidate{
			{Title: "seal  worn OUT", Score: 0.9},
			{Title: "No torque check at start-up", Score: 0.8},
			{Title: "Supplier changed the gasket grade", Score: 0.5},
			{Title: "Unrelated", Score: 0.1},
		},
	})
	if !slices.Equal(got, []string{"No torque check at start-up", "Supplier changed the gasket grade"}) {
		t.Fatalf("%v", got)
	}
}

func TestFiveWhyLeavesOutUnrelatedRecords(t *testing.T) {
	got, _ := Deterministic{}.FiveWhy(context.Background(), WhyInput{
		Candidates: []Candidate{
			{Title: "Suction strainer clogs with scale", Score: 0.42},
			{Title: "Order office chairs", Score: 0.05},
			{Title: "Paint the fence", Score: 0.02},
		},
	})
	if !slices.Equal(got, []string{"Suction strainer clogs with scale"}) {
		t.Fatalf("%v", got)
	}
}

func TestLookAcrossKeepsProjectsWithEvidence(t *testing.T) {
	got, _ := Deterministic{}.LookAcross(context.Background(), LookAcrossInput{
		RootCauses: []string{"no torque check"}, Actions: []string{"add torque check"},
		Projects: []ProjectCandidates{
			{ProjectID: "weak", Items: []Candidate{{Title: "x", Score: 0.1}}},
			{ProjectID: "strong", Items: []Candidate{{Title: "a", Score: 0.3}, {Title: "b", Score: 0.6}}},
			{ProjectID: "empty"},
		},
	})
	if len(got) != 1 || got[0].ProjectID != "strong" || got[0].Evidence[0].Title != "b" || got[0].Score != 0.6 || got[0].Actions[0] != "add torque check" {
		t.Fatalf("%+v", got)
	}
}
