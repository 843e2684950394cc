package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestArchiveAndRestoreAreIdempotent, for every archivable resource: archiving
// stamps archivedAt and emits once, archiving again keeps the stamp and emits
// nothing, restoring clears it (once), and a later archive stamps anew.
func TestArchiveAndRestoreAreIdempotent(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	type resource struct {
		name, event      string
		archive, restore func() *apitest.Response
	}
	idBody := func(field, id string) map[string]any { return map[string]any{field: id} }
	post := func(path string, body map[string]any) func() *apitest.Response {
		return func() *apitest.Response { return tn.Do(t, "POST", path, body) }
	}
	other := tn.CreateProject(t, map[string]any{"name": "Archived"})["id"].(string)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "t"})["id"].(string)
	risk := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "r"})["id"].(string)
	item := tn.CreateActionItem(t, map[string]any{"title": "a"})["id"].(string)
	analysis := tn.CreateRRCA(t, map[string]any{"title": "x"})
	for _, r := range []resource{
		{"project", "project", post(apitest.ProjectBase+"archive", idBody("id", other)),
			post(apitest.ProjectBase+"restore", idBody("id", other))},
		{"task", "task", post(apitest.TaskBase+"archive", idBody("taskId", task)),
			post(apitest.TaskBase+"restore", idBody("taskId", task))},
		{"risk", "risk", post(apitest.RiskBase+"archive", idBody("riskId", risk)),
			post(apitest.RiskBase+"restore", idBody("riskId", risk))},
		{"action item", "action-item", post(apitest.ActionItemBase+"archive", idBody("actionItemId", item)),
			post(apitest.ActionItemBase+"restore", idBody("actionItemId", item))},
		{"analysis", "rrca", post(apitest.RRCABase+"/"+analysis+"/archive", nil),
			post(apitest.RRCABase+"/"+analysis+"/restore", nil)},
	} {
		t.Run(r.name, func(t *testing.T) {
			count := func(what string) int { return len(tn.EventsOf(t, r.event+"."+what)) }
			first := r.archive()
			if first.Status != 201 || first.Data()["archivedAt"] == nil {
				t.Fatalf("archive: %d %s", first.Status, first.Raw)
			}
			if again := r.archive(); again.Status != 201 || again.Str("archivedAt") != first.Str("archivedAt") {
				t.Errorf("archive again: %d %s; want archivedAt %s kept", again.Status, again.Raw, first.Str("archivedAt"))
			}
			if n := count("archived"); n != 1 {
				t.Errorf("%d %s.archived events for two archives, want 1", n, r.event)
			}
			for range 2 {
				if rest := r.restore(); rest.Status != 201 || rest.Data()["archivedAt"] != nil {
					t.Errorf("restore: %d %s", rest.Status, rest.Raw)
				}
			}
			if n := count("restored"); n != 1 {
				t.Errorf("%d %s.restored events for two restores, want 1", n, r.event)
			}
			if later := r.archive(); later.Data()["archivedAt"] == nil || later.Str("archivedAt") == first.Str("archivedAt") {
				t.Errorf("archive after a restore: %s; want a new archivedAt", later.Raw)
			}
		})
	}
}
