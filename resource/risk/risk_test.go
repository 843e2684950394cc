package risk

import (
	"errors"
	"slices"
	"testing"

	"github.com/pmapi/pmapi"
)

// TestTransitionTable tries all 9 pairs against the risk status table of docs/decisions.md,
// written out here independently of the code, with no database.
func TestTransitionTable(t *testing.T) {
	table := map[[2]string]bool{
		{Open, Mitigating}: true, {Open, Resolved}: true,
		{Mitigating, Resolved}: true, {Mitigating, Open}: true,
		{Resolved, Open}: true,
	}
	pairs := 0
	for _, from := range Statuses {
		for _, to := range Statuses {
			pairs++
			err := CheckTransition(from, to)
			if table[[2]string{from, to}] {
				if err != nil {
					t.Errorf("%s -> %s refused: %v", from, to, err)
				}
				continue
			}
			var e *pmapi.Error
			if !errors.As(err, &e) || e.Code != pmapi.CodeInvalidTransition {
				t.Errorf("%s -> %s: got %v, want INVALID_TRANSITION", from, to, err)
				continue
			}
			var allowed []string
			for k := range table {
				if k[0] == from {
					allowed = append(allowed, k[1])
				}
			}
			got := e.Details["allowed"].([]string)
			if e.Details["from"] != from || e.Details["to"] != to || len(got) != len(allowed) {
				t.Errorf("%s -> %s: details %v", from, to, e.Details)
			}
			for _, a := range allowed {
				if !slices.Contains(got, a) {
					t.Errorf("%s -> %s: allowed %v lacks %s", from, to, got, a)
				}
			}
		}
	}
	if pairs != 9 {
		t.Fatalf("%d pairs tried, want 9", pairs)
	}
	// An unknown status is a validation error naming the field, not a transition.
	var e *pmapi.Error
	if err := CheckTransition(Open, "CLOSED"); !errors.As(err, &e) || e.Code == pmapi.CodeInvalidTransition || e.Details["field"] != "status" {
		t.Errorf("unknown status: %v", err)
	}
}
