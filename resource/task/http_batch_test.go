package task_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func batchResults(t *testing.T, r *apitest.Response) []map[string]any {
	t.Helper()
	raw, ok := r.Data()["results"].([]any)
	if !ok {
		t.Fatalf("no results: %d %s", r.Status, r.Raw)
	}
	out := make([]map[string]any, len(raw))
	for i, it := range raw {
		out[i] = it.(map[string]any)
		if out[i]["index"] != float64(i) {
			t.Errorf("result %d has index %v", i, out[i]["index"])
		}
	}
	return out
}

func itemCode(res map[string]any) any {
	e, _ := res["error"].(map[string]any)
	return e["code"]
}

func TestTaskBatchNonAtomicReportsEachOperation(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	todo := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "todo"})["id"].(string)
	before := len(tn.Events(t))
	r := tn.Do(t, "POST", apitest.TaskBase+"batch", `{"operations": [
		{"op": "create", "projectId": "`+prj+`", "title": "made in a batch", "priority": 2.0},
		{"op": "update", "taskId": "`+todo+`", "status": "REVIEW"},
		{"op": "archive", "taskId": "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"},
		{"op": "create", "projectId": "`+prj+`", "title": "bad", "priority": 2.5},
		{"op": "update", "taskId": "`+todo+`", "status": "IN_PROGRESS", "title": "started"},
		{"op": "archive", "taskId": "`+todo+`"},
		{"op": "create", "projectId": "`+prj+`", "title": "x", "colour": "red"}
	]}`)
	if r.Status != 201 || r.Data()["atomic"] != false {
		t.Fatalf("batch: %d %s", r.Status, r.Raw)
	}
	res := batchResults(t, r)
	wantOK := []bool{true, false, false, false, true, true, false}
	wantCode := []any{nil, "INVALID_TRANSITION", "NOT_FOUND", "VALIDATION_FAILED", nil, nil, "VALIDATION_FAILED"}
	for i, it := range res {
		if it["success"] != wantOK[i] || itemCode(it) != wantCode[i] || (it["data"] != nil) != wantOK[i] {
			t.Errorf("result %d: %v, want success %v code %v", i, it, wantOK[i], wantCode[i])
		}
	}
	if d := res[1]["error"].(map[string]any)["details"].(map[string]any); d["from"] != "TODO" || d["to"] != "REVIEW" {
		t.Errorf("transition details: %v", d)
	}
	if d := res[3]["error"].(map[string]any)["details"].(map[string]any); d["field"] != "priority" {
		t.Errorf("priority details: %v", d)
	}
	if d := res[6]["error"].(map[string]any)["details"].(map[string]any); d["field"] != "colour" {
		t.Errorf("unknown field details: %v", d)
	}
	if v := res[0]["data"].(map[string]any); v["title"] != "made in a batch" || v["priority"] != float64(2) {
		t.Errorf("created: %v", v)
	}
	got := tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": todo}).Data()
	if got["status"] != "IN_PROGRESS" || got["title"] != "started" || got["archivedAt"] == nil {
		t.Errorf("the later operations on the task did not apply: %v", got)
	}
	var types []string
	for _, e := range tn.Events(t)[before:] {
		types = append(types, e.Type)
		if e.Jobs != 1 {
			t.Errorf("event %s has %d jobs", e.Type, e.Jobs)
		}
	}
	want := []string{"task.created", "task.status_changed", "task.updated", "task.archived"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v: failed operations must write none", types, want)
	}
}

func TestTaskBatchAtomicIsAllOrNothing(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	todo := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "todo"})["id"].(string)
	state := func() (int, int, any) {
		list := tn.Get(t, apitest.TaskBase+"list", map[string]string{"includeArchived": "true"})
		return len(list.IDs()), len(tn.Events(t)),
			tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": todo}).Data()["updatedAt"]
	}
	tasks, events, updated := state()

	for _, tc := range []struct {
		name   string
		second map[string]any
		status int
		code   string
		detail [2]any
	}{
		{"refused move", map[string]any{"op": "update", "taskId": todo, "status": "REVIEW"}, 400, "INVALID_TRANSITION",
			[2]any{"from", "TODO"}},
		{"absent task", map[string]any{"op": "restore", "taskId": "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"}, 404, "NOT_FOUND",
			[2]any{}},
		{"bad priority", map[string]any{"op": "create", "projectId": prj, "title": "y", "priority": 0}, 400,
			"VALIDATION_FAILED", [2]any{"field", "priority"}},
		{"stranger assignee", map[string]any{"op": "update", "taskId": todo,
			"assigneeId": "00000000-0000-0000-0000-000000000001"}, 400, "VALIDATION_FAILED",
			[2]any{"field", "assigneeId"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tn.Do(t, "POST", apitest.TaskBase+"batch", map[string]any{"atomic": true, "operations": []any{
				map[string]any{"op": "create", "projectId": prj, "title": "would be created"},
				tc.second,
				map[string]any{"op": "update", "taskId": todo, "title": "would be renamed", "status": "IN_PROGRESS"},
			}})
			apitest.WantError(t, r, tc.status, tc.code)
			d := r.ErrorDetails()
			if d["index"] != float64(1) {
				t.Errorf("details.index = %v, want 1", d["index"])
			}
			if tc.detail[0] != nil && d[tc.detail[0].(string)] != tc.detail[1] {
				t.Errorf("details %v lack %v", d, tc.detail)
			}
			results, _ := d["results"].([]any)
			if len(results) != 3 {
				t.Fatalf("details.results: %v", d["results"])
			}
			for i, it := range results {
				m := it.(map[string]any)
				want := "NOT_APPLIED"
				if i == 1 {
					want = tc.code
				}
				if m["index"] != float64(i) || m["success"] != false || itemCode(m) != want || m["data"] != nil {
					t.Errorf("result %d: %v, want %s", i, m, want)
				}
			}
			if n, e, u := state(); n != tasks || e != events || u != updated {
				t.Errorf("a failed atomic batch wrote: %d->%d tasks, %d->%d events, updatedAt %v->%v", tasks, n,
					events, e, updated, u)
			}
		})
	}

	r := tn.Do(t, "POST", apitest.TaskBase+"batch", map[string]any{"atomic": true, "operations": []any{
		map[string]any{"op": "create", "projectId": prj, "title": "created"},
		map[string]any{"op": "update", "taskId": todo, "status": "IN_PROGRESS"},
		map[string]any{"op": "update", "taskId": todo, "status": "REVIEW", "priority": 1},
	}})
	if r.Status != 201 || r.Data()["atomic"] != true {
		t.Fatalf("atomic batch: %d %s", r.Status, r.Raw)
	}
	res := batchResults(t, r)
	if res[2]["data"].(map[string]any)["status"] != "REVIEW" || res[0]["success"] != true {
		t.Errorf("results: %v", res)
	}
	changed := tn.EventsOf(t, "task.status_changed")
	if len(changed) != 2 || changed[0].Data["to"] != "IN_PROGRESS" || changed[1].Data["from"] != "IN_PROGRESS" ||
		changed[1].Data["to"] != "REVIEW" {
		t.Errorf("status events: %v", changed)
	}
	if n, _, _ := state(); n != tasks+1 {
		t.Errorf("%d tasks after the atomic create, want %d", n, tasks+1)
	}
}

func TestTaskBatchRefusesMalformedRequests(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	many := make([]any, 101)
	for i := range many {
		many[i] = map[string]any{"op": "create", "projectId": prj, "title": fmt.Sprint(i)}
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"101 operations", map[string]any{"operations": many}, "operations"},
		{"101 atomic operations", map[string]any{"atomic": true, "operations": many}, "operations"},
		{"no operations", map[string]any{"operations": []any{}}, "operations"},
		{"operations missing", map[string]any{"atomic": true}, "operations"},
		{"operations not a list", map[string]any{"operations": "all"}, "operations"},
		{"unknown op", map[string]any{"operations": []any{map[string]any{"op": "create", "projectId": prj,
			"title": "x"}, map[string]any{"op": "delete", "taskId": "x"}}}, "operations[1].op"},
		{"op missing", map[string]any{"operations": []any{map[string]any{"taskId": "x"}}}, "operations[0].op"},
		{"op not a string", map[string]any{"operations": []any{map[string]any{"op": 1}}}, "operations[0].op"},
		{"operation not an object", map[string]any{"operations": []any{"create"}}, "operations[0]"},
		{"atomic not a boolean", map[string]any{"atomic": "yes", "operations": many[:1]}, "atomic"},
		{"unknown top-level field", map[string]any{"operations": many[:1], "dryRun": true}, "dryRun"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tn.Do(t, "POST", apitest.TaskBase+"batch", tc.body)
			apitest.WantError(t, r, 400, "VALIDATION_FAILED")
			if got := r.ErrorDetails()["field"]; got != tc.field {
				t.Errorf("details.field = %v, want %s", got, tc.field)
			}
		})
	}
	if n := len(tn.EventsOf(t, "task.created")); n != 0 {
		t.Errorf("refused batches created %d tasks", n)
	}
	// 100 is the limit, not beyond it.
	r := tn.Do(t, "POST", apitest.TaskBase+"batch", map[string]any{"atomic": true, "operations": many[:100]})
	if r.Status != 201 || len(batchResults(t, r)) != 100 {
		t.Fatalf("100 operations: %d", r.Status)
	}
}

func TestTaskBatchReplaysWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	prj := tn.TaskProject(t)
	body := map[string]any{"operations": []any{map[string]any{"op": "create", "projectId": prj, "title": "once"}}}
	send := func() *apitest.Response {
		return env.Do(t, apitest.Request{Method: "POST", Path: apitest.TaskBase + "batch", Body: body,
			Header: map[string]string{
				"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "Idempotency-Key": "batch-1"}})
	}
	first, second := send(), send()
	if first.Status != 201 || second.Status != 201 || second.Header.Get("Idempotent-Replayed") != "true" ||
		string(first.Raw) != string(second.Raw) {
		t.Fatalf("replay: %d %d %s", first.Status, second.Status, second.Raw)
	}
	if n := len(tn.EventsOf(t, "task.created")); n != 1 {
		t.Errorf("a replayed batch ran again: %d task.created events", n)
	}
}
