package task_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// pathTo is how a new task (TODO) reaches each status through allowed moves.
var pathTo = map[string][]string{
	"TODO":        nil,
	"IN_PROGRESS": {"IN_PROGRESS"},
	"BLOCKED":     {"BLOCKED"},
	"DONE":        {"DONE"},
	"REVIEW":      {"IN_PROGRESS", "REVIEW"},
}

var taskStatuses = []string{"TODO", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE"}

// allowedMoves is the status table of docs/decisions/tasks-risks-notes.md, written out independently of the code.
var allowedMoves = map[string][]string{
	"TODO":        {"IN_PROGRESS", "BLOCKED", "DONE"},
	"IN_PROGRESS": {"REVIEW", "BLOCKED", "TODO"},
	"REVIEW":      {"DONE", "IN_PROGRESS"},
	"BLOCKED":     {"TODO", "IN_PROGRESS"},
	"DONE":        {"IN_PROGRESS"},
}

func TestTaskTransitionTableOnPostAndPatch(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	tried := 0
	for _, method := range []string{"POST", "PATCH"} {
		for _, from := range taskStatuses {
			for _, to := range taskStatuses {
				t.Run(fmt.Sprintf("%s %s to %s", method, from, to), func(t *testing.T) {
					tried++
					id := tn.CreateTask(t, map[string]any{"projectId": prj,
						"title": from + " to " + to})["id"].(string)
					for _, step := range pathTo[from] {
						if r := tn.Do(t, method, apitest.TaskBase+"update",
							map[string]any{"taskId": id, "status": step}); r.Status != 201 {
							t.Fatalf("reaching %s: %d %s", from, r.Status, r.Raw)
						}
					}
					before := tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}).Data()
					eventsBefore := len(tn.Events(t))
					r := tn.Do(t, method, apitest.TaskBase+"update", map[string]any{"taskId": id, "status": to})
					if slices.Contains(allowedMoves[from], to) {
						if r.Status != 201 || r.Str("status") != to {
							t.Fatalf("allowed move answered %d %s", r.Status, r.Raw)
						}
						changed := tn.EventsOf(t, "task.status_changed")
						last := changed[len(changed)-1].Data
						if last["taskId"] != id || last["from"] != from || last["to"] != to || len(last) != 3 {
							t.Errorf("task.status_changed data %v, want exactly {taskId %s, from %s, to %s}", last, id,
								from, to)
						}
						return
					}
					apitest.WantError(t, r, 400, "INVALID_TRANSITION")
					d := r.ErrorDetails()
					var allowed []string
					for _, a := range d["allowed"].([]any) {
						allowed = append(allowed, a.(string))
					}
					if d["from"] != from || d["to"] != to || !slices.Equal(allowed, allowedMoves[from]) {
						t.Errorf("details %v, want from %s, to %s, allowed %v", d, from, to, allowedMoves[from])
					}
					after := tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}).Data()
					if after["status"] != from || after["updatedAt"] != before["updatedAt"] {
						t.Errorf("a refused move changed the task: %v -> %v", before, after)
					}
					if n := len(tn.Events(t)); n != eventsBefore {
						t.Errorf("a refused move wrote %d events", n-eventsBefore)
					}
				})
			}
		}
	}
	if tried != 50 {
		t.Fatalf("tried %d moves, want 25 pairs on each of 2 methods", tried)
	}
	for _, e := range tn.Events(t) {
		if e.Jobs != 1 {
			t.Errorf("event %s has %d fan-out jobs, want 1", e.Type, e.Jobs)
		}
	}
}

func TestTaskLifecycleAndEvents(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	v := tn.CreateTask(t, map[string]any{"projectId": prj, "title": " Replace motor ", "description": "line 4",
		"assigneeId": tn.UserID, "reporterId": tn.UserID, "startDate": "2026-03-01T08:00:00Z",
		"dueDate": "2026-03-05T17:00:00+02:00"})
	id := v["id"].(string)
	if v["title"] != "Replace motor" || v["status"] != "TODO" || v["priority"] != float64(3) ||
		v["projectId"] != prj ||
		v["dueDate"] != "2026-03-05T15:00:00Z" || v["assigneeId"] != tn.UserID || v["archivedAt"] != nil {
		t.Fatalf("created: %v", v)
	}
	if d := tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}); d.Status != 200 ||
		d.Str("title") != "Replace motor" {
		t.Fatalf("detail: %d %s", d.Status, d.Raw)
	}

	// null clears a nullable field, an absent one stays.
	up := tn.Do(t, "PATCH", apitest.TaskBase+"update",
		map[string]any{"taskId": id, "assigneeId": nil, "description": nil, "priority": 1})
	if up.Status != 201 || up.Data()["assigneeId"] != nil || up.Data()["description"] != nil ||
		up.Data()["priority"] != float64(1) ||
		up.Str("reporterId") != tn.UserID || up.Str("startDate") != "2026-03-01T08:00:00Z" ||
		up.Str("title") != "Replace motor" {
		t.Fatalf("update: %d %s", up.Status, up.Raw)
	}
	// An update that changes nothing writes nothing.
	before := len(tn.Events(t))
	if r := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": id, "priority": 1, "assigneeId": nil}); r.Status != 201 ||
		r.Str("updatedAt") != up.Str("updatedAt") {
		t.Fatalf("no-op update: %d %s", r.Status, r.Raw)
	}
	if n := len(tn.Events(t)); n != before {
		t.Errorf("a no-op update wrote %d events", n-before)
	}
	st := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": id, "status": "IN_PROGRESS", "assigneeId": tn.UserID})
	if st.Status != 201 || st.Str("status") != "IN_PROGRESS" {
		t.Fatalf("status: %d %s", st.Status, st.Raw)
	}
	arch := tn.Do(t, "POST", apitest.TaskBase+"archive", map[string]any{"taskId": id})
	if arch.Status != 201 || arch.Data()["archivedAt"] == nil {
		t.Fatalf("archive: %d %s", arch.Status, arch.Raw)
	}
	if again := tn.Do(t, "POST", apitest.TaskBase+"archive", map[string]any{"taskId": id}); again.Status != 201 ||
		again.Str("archivedAt") != arch.Str("archivedAt") {
		t.Fatalf("archive twice: %d %s", again.Status, again.Raw)
	}
	rest := tn.Do(t, "POST", apitest.TaskBase+"restore", map[string]any{"taskId": id})
	if rest.Status != 201 || rest.Data()["archivedAt"] != nil {
		t.Fatalf("restore: %d %s", rest.Status, rest.Raw)
	}

	var types []string
	for _, e := range tn.Events(t) {
		if e.Jobs != 1 {
			t.Errorf("event %s has %d fan-out jobs, want 1", e.Type, e.Jobs)
		}
		if e.Type != "project.created" {
			types = append(types, e.Type)
		}
	}
	want := []string{"task.created", "task.assigned", "task.assigned", "task.updated",
		"task.status_changed", "task.assigned", "task.updated", "task.archived", "task.restored"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	assigned := tn.EventsOf(t, "task.assigned")
	if a := assigned[0].Data; a["taskId"] != id || a["from"] != nil || a["to"] != tn.UserID {
		t.Errorf("assigned at creation: %v", a)
	}
	if a := assigned[1].Data; a["from"] != tn.UserID || a["to"] != nil {
		t.Errorf("unassigned: %v", a)
	}
	if a := assigned[2].Data; a["from"] != nil || a["to"] != tn.UserID {
		t.Errorf("reassigned: %v", a)
	}
	if u := tn.EventsOf(t, "task.updated"); u[len(u)-1].Data["status"] != "IN_PROGRESS" ||
		u[len(u)-1].Data["id"] != id {
		t.Errorf("task.updated carries the view after the change: %v", u[len(u)-1].Data)
	}
}

func TestTaskInAnArchivedProject(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	if r := tn.Do(t, "POST", apitest.TaskBase+"create",
		map[string]any{"projectId": prj, "title": "late work"}); r.Status != 201 {
		t.Fatalf("an archived project refuses tasks: %d %s", r.Status, r.Raw)
	}
}

func TestTaskValidation(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	id := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "x"})["id"].(string)
	create := func(extra string) string { return `{"projectId":"` + prj + `","title":"t"` + extra + `}` }
	update := func(extra string) string { return `{"taskId":"` + id + `"` + extra + `}` }
	for _, p := range []string{"3", "3.0", "1", "5", "5.00"} {
		r := tn.Do(t, "POST", apitest.TaskBase+"create", create(`,"priority":`+p))
		want := map[string]float64{"3": 3, "3.0": 3, "1": 1, "5": 5, "5.00": 5}[p]
		if r.Status != 201 || r.Data()["priority"].(float64) != want {
			t.Errorf("priority %s: %d %s", p, r.Status, r.Raw)
		}
		if r := tn.Do(t, "PATCH", apitest.TaskBase+"update", update(`,"priority":`+p)); r.Status != 201 {
			t.Errorf("update priority %s: %d %s", p, r.Status, r.Raw)
		}
	}
	cases := []struct {
		name, path, body, field string
	}{
		{"priority 0", "create", create(`,"priority":0`), "priority"},
		{"priority 6", "create", create(`,"priority":6`), "priority"},
		{"priority 2.5", "create", create(`,"priority":2.5`), "priority"},
		{"priority string", "create", create(`,"priority":"3"`), "priority"},
		{"priority null", "create", create(`,"priority":null`), "priority"},
		{"priority bool", "create", create(`,"priority":true`), "priority"},
		{"update priority 0", "update", update(`,"priority":0`), "priority"},
		{"update priority 6", "update", update(`,"priority":6`), "priority"},
		{"update priority 2.5", "update", update(`,"priority":2.5`), "priority"},
		{"update priority string", "update", update(`,"priority":"3"`), "priority"},
		{"update priority null", "update", update(`,"priority":null`), "priority"},
		{"no project", "create", `{"title":"t"}`, "projectId"},
		{"null project", "create", `{"projectId":null,"title":"t"}`, "projectId"},
		{"no title", "create", `{"projectId":"` + prj + `"}`, "title"},
		{"null title", "create", `{"projectId":"` + prj + `","title":null}`, "title"},
		{"blank title", "create", create(`,"title":"  "`), "title"},
		{"title wrong type", "create", `{"projectId":"` + prj + `","title":5}`, "title"},
		{"long title", "create", `{"projectId":"` + prj + `","title":"` + strings.Repeat("a", 501) + `"}`, "title"},
		{"due date not RFC 3339", "create", create(`,"dueDate":"2026-03-01"`), "dueDate"},
		{"due before start", "create", create(`,"startDate":"2026-03-02T00:00:00Z","dueDate":"2026-03-01T00:00:00Z"`),
			"dueDate"},
		{"assignee not a user", "create", create(`,"assigneeId":"00000000-0000-0000-0000-000000000001"`),
			"assigneeId"},
		{"assignee not a uuid", "create", create(`,"assigneeId":"bob"`), "assigneeId"},
		{"reporter not a user", "create", create(`,"reporterId":"00000000-0000-0000-0000-000000000001"`),
			"reporterId"},
		{"status at creation", "create", create(`,"status":"DONE"`), "status"},
		{"unknown field", "create", create(`,"colour":"red"`), "colour"},
		{"no task id", "update", `{"status":"DONE"}`, "taskId"},
		{"null task id", "update", `{"taskId":null,"status":"DONE"}`, "taskId"},
		{"null status", "update", update(`,"status":null`), "status"},
		{"unknown status", "update", update(`,"status":"DOING"`), "status"},
		{"null title on update", "update", update(`,"title":null`), "title"},
		{"update assignee stranger", "update", update(`,"assigneeId":"00000000-0000-0000-0000-000000000001"`),
			"assigneeId"},
		{"no task id to archive", "archive", `{}`, "taskId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{"POST", "PATCH"} {
				if method == "PATCH" && tc.path != "update" {
					continue
				}
				r := tn.Do(t, method, apitest.TaskBase+tc.path, tc.body)
				apitest.WantError(t, r, 400, "VALIDATION_FAILED")
				if got := r.ErrorDetails()["field"]; got != tc.field {
					t.Errorf("%s: details.field = %v, want %s: %s", method, got, tc.field, r.Raw)
				}
			}
		})
	}
	for _, tc := range []struct{ path, body string }{
		{"create", `{"projectId":"prj_nope","title":"t"}`},
		{"create", `{"projectId":"prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0","title":"t"}`},
		{"update", `{"taskId":"tsk_nope","status":"DONE"}`},
		{"update", `{"taskId":"` + prj + `","status":"DONE"}`},
		{"archive", `{"taskId":"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"}`},
		{"restore", `{"taskId":"x"}`},
	} {
		apitest.WantError(t, tn.Do(t, "POST", apitest.TaskBase+tc.path, tc.body), 404, "NOT_FOUND")
	}
	apitest.WantError(t, tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": "tsk_nope"}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.TaskBase+"detail", nil), 404, "NOT_FOUND")
	if n := len(tn.EventsOf(t, "task.created")); n != 6 {
		t.Errorf("%d task.created events, want 6: refused creates must write none", n)
	}
}

func TestTasksAreIsolatedBetweenWorkspaces(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	prj := a.TaskProject(t)
	id := a.CreateTask(t, map[string]any{"projectId": prj, "title": "secret task",
		"assigneeId": a.UserID})["id"].(string)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.TaskBase + "detail?id=" + id, nil},
		{"POST", apitest.TaskBase + "create", map[string]any{"projectId": prj, "title": "intruder"}},
		{"POST", apitest.TaskBase + "update", map[string]any{"taskId": id, "title": "mine"}},
		{"PATCH", apitest.TaskBase + "update", map[string]any{"taskId": id, "status": "DONE"}},
		{"POST", apitest.TaskBase + "archive", map[string]any{"taskId": id}},
		{"POST", apitest.TaskBase + "restore", map[string]any{"taskId": id}},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	batch := b.Do(t, "POST", apitest.TaskBase+"batch", map[string]any{"operations": []any{
		map[string]any{"op": "update", "taskId": id, "status": "DONE"},
		map[string]any{"op": "archive", "taskId": id},
		map[string]any{"op": "create", "projectId": prj, "title": "intruder"},
	}})
	if batch.Status != 201 {
		t.Fatalf("batch: %d %s", batch.Status, batch.Raw)
	}
	for _, res := range batch.Data()["results"].([]any) {
		if e, _ := res.(map[string]any)["error"].(map[string]any); e["code"] != "NOT_FOUND" {
			t.Errorf("B's batch reached A's task or project: %v", res)
		}
	}
	for _, q := range []map[string]string{
		{"includeArchived": "true"}, {"projectId": prj}, {"q": "secret"}, {"assigneeId": a.UserID}, {"status": "TODO"},
	} {
		if ids := b.Get(t, apitest.TaskBase+"list", q).IDs(); len(ids) != 0 {
			t.Errorf("B lists A's tasks with %v: %v", q, ids)
		}
	}
	// B's tasks cannot name A's user either.
	bp := b.TaskProject(t)
	apitest.WantError(t, b.Do(t, "POST", apitest.TaskBase+"create",
		map[string]any{"projectId": bp, "title": "x", "assigneeId": a.UserID}), 400, "VALIDATION_FAILED")
	if r := a.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}); r.Str("title") != "secret task" ||
		r.Str("status") != "TODO" || r.Data()["archivedAt"] != nil {
		t.Errorf("A's task changed: %s", r.Raw)
	}
	if n := len(b.EventsOf(t, "task.created")); n != 0 {
		t.Errorf("B has %d task events", n)
	}
}

func TestTaskScopes(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	id := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "x"})["id"].(string)
	reader := tn.WithKey(tn.NewKey(t, "tasks:read"))
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", "create", map[string]any{"projectId": prj, "title": "x"}},
		{"POST", "update", map[string]any{"taskId": id, "status": "DONE"}},
		{"PATCH", "update", map[string]any{"taskId": id, "status": "DONE"}},
		{"POST", "archive", map[string]any{"taskId": id}},
		{"POST", "restore", map[string]any{"taskId": id}},
		{"POST", "batch", map[string]any{"operations": []any{map[string]any{"op": "archive", "taskId": id}}}},
	} {
		r := reader.Do(t, tc.method, apitest.TaskBase+tc.path, tc.body)
		apitest.WantError(t, r, 403, "INSUFFICIENT_SCOPE")
		if r.ErrorDetails()["scope"] != "tasks:write" {
			t.Errorf("%s %s: details.scope: %s", tc.method, tc.path, r.Raw)
		}
	}
	if r := reader.Get(t, apitest.TaskBase+"list", nil); r.Status != 200 || len(r.IDs()) != 1 {
		t.Errorf("list with tasks:read: %d %s", r.Status, r.Raw)
	}
	if r := reader.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}); r.Status != 200 ||
		r.Str("status") != "TODO" {
		t.Errorf("detail with tasks:read: %d %s", r.Status, r.Raw)
	}
	other := tn.WithKey(tn.NewKey(t, "projects:read", "projects:write"))
	for _, r := range []*apitest.Response{other.Get(t, apitest.TaskBase+"list", nil),
		other.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id})} {
		apitest.WantError(t, r, 403, "INSUFFICIENT_SCOPE")
		if r.ErrorDetails()["scope"] != "tasks:read" {
			t.Errorf("details.scope: %s", r.Raw)
		}
	}
}

func TestProjectDeleteRemovesItsTasks(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj, keep := tn.TaskProject(t), tn.TaskProject(t)
	ids := []string{
		tn.CreateTask(t, map[string]any{"projectId": prj, "title": "one"})["id"].(string),
		tn.CreateTask(t, map[string]any{"projectId": prj, "title": "two"})["id"].(string),
	}
	tn.Do(t, "POST", apitest.TaskBase+"archive", map[string]any{"taskId": ids[1]})
	other := tn.CreateTask(t, map[string]any{"projectId": keep, "title": "elsewhere"})["id"].(string)
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	del := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": prj})
	if del.Status != 201 || del.Data()["cascaded"].(map[string]any)["tasks"] != float64(2) {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	for _, id := range ids {
		apitest.WantError(t, tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": id}), 404, "NOT_FOUND")
	}
	if r := tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": other}); r.Status != 200 {
		t.Errorf("another project's task went too: %d", r.Status)
	}
	deleted := tn.EventsOf(t, "task.deleted")
	if len(deleted) != 2 {
		t.Fatalf("%d task.deleted events, want 2", len(deleted))
	}
	for i, e := range deleted {
		if e.Data["taskId"] != ids[i] || e.Data["projectId"] != prj || len(e.Data) != 2 || e.Jobs != 1 {
			t.Errorf("task.deleted %d: %v (jobs %d)", i, e.Data, e.Jobs)
		}
	}
}

func TestTaskEventTypesAreListed(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/webhooks/event-types"})
	var types []string
	for _, it := range r.Items() {
		types = append(types, it["type"].(string))
	}
	for _, want := range []string{"task.created", "task.updated", "task.status_changed", "task.assigned",
		"task.archived", "task.restored", "task.deleted"} {
		if !slices.Contains(types, want) {
			t.Errorf("event types lack %s: %v", want, types)
		}
	}
}
