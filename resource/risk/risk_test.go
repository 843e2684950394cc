package risk

import (
	"testing"

	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
)

// TestTransitionTable tries all 9 pairs against the risk status table of docs/decisions/tasks-risks-notes.md,
// written out here independently of the code, with no database.
func TestTransitionTable(t *testing.T) {
	table := map[[2]string]bool{
		{Open, Mitigating}: true, {Open, Resolved}: true,
		{Mitigating, Resolved}: true, {Mitigating, Open}: true,
		{Resolved, Open}: true,
	}
	if pairs := validatetest.Transitions(t, Statuses, table, CheckTransition); pairs != 9 {
		t.Fatalf("%d pairs tried, want 9", pairs)
	}
}
