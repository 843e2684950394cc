package search_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestSearchFollowsATasksText: a task's text lives beside its row for search
// (migration 0015); search finds what the task says now, by word and by typo,
// with its status filter reading the task's own status, and another workspace
// finds none of it.
func TestSearchFollowsATasksText(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	tsk := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Calibrate torque wrenches",
		"description": "Quarterly check on line seven"})["id"].(string)
	other := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Order torque sensors"})["id"].(string)

	find := func(q map[string]string, want ...string) {
		t.Helper()
		ids := searchIDs(t, tn, q)
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("search %v: %v, want %v", q, ids, want)
		}
	}
	find(map[string]string{"q": "torque", "types": "task"}, tsk, other)
	find(map[string]string{"q": "quarterly", "types": "task"}, tsk)
	find(map[string]string{"q": "wrenchs", "types": "task"}, tsk)

	if r := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": tsk, "status": "IN_PROGRESS"}); r.Status != 201 {
		t.Fatalf("status update: %d %s", r.Status, r.Raw)
	}
	find(map[string]string{"q": "torque", "types": "task", "status": "IN_PROGRESS"}, tsk)
	find(map[string]string{"q": "torque", "types": "task", "status": "TODO"}, other)

	if r := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": tsk, "title": "Inspect conveyor belts", "description": nil}); r.Status != 201 {
		t.Fatalf("text update: %d %s", r.Status, r.Raw)
	}
	find(map[string]string{"q": "torque", "types": "task"}, other)
	find(map[string]string{"q": "quarterly", "types": "task"})
	find(map[string]string{"q": "conveyer", "types": "task"}, tsk)
	r := tn.Get(t, apitest.SearchPath, map[string]string{"q": "conveyor"})
	if items := r.Items(); len(items) != 1 || items[0]["title"] != "Inspect conveyor belts" ||
		items[0]["snippet"] == "" {
		t.Errorf("the retitled task: %s", r.Raw)
	}

	stranger := apitest.NewTenant(t)
	if ids := searchIDs(t, stranger, map[string]string{"q": "conveyor"}); len(ids) != 0 {
		t.Errorf("another workspace found %v", ids)
	}
}
