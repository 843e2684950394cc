package actionitem_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestActionItemLifecycleAndLogs(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	it := tn.CreateActionItem(t, map[string]any{"title": "Add torque check", "ownerHint": "Maintenance (night shift)",
		"dueDate": "2026-12-01T09:00:00Z"})
	id := it["id"].(string)
	if it["status"] != "OPEN" || it["source"] != "MANUAL" || it["projectId"] != nil {
		t.Fatalf("created: %v", it)
	}
	prj := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	att := tn.Do(t, "POST", apitest.ActionItemBase+"attach-project",
		map[string]any{"actionItemId": id, "projectId": prj})
	if att.Status != 201 || att.Str("projectId") != prj {
		t.Fatalf("attach: %d %s", att.Status, att.Raw)
	}
	up := tn.Do(t, "POST", apitest.ActionItemBase+"update",
		map[string]any{"actionItemId": id, "status": "IN_PROGRESS", "ownerHint": nil})
	if up.Status != 201 || up.Str("status") != "IN_PROGRESS" || up.Data()["ownerHint"] != nil ||
		up.Str("title") != "Add torque check" {
		t.Fatalf("update: %d %s", up.Status, up.Raw)
	}
	logged := tn.Do(t, "POST", apitest.ActionItemBase+id+"/log",
		map[string]any{"kind": "PROGRESS", "message": "Checklist drafted"})
	if logged.Status != 201 || logged.Str("kind") != "PROGRESS" || logged.Str("author") != tn.ClientID {
		t.Fatalf("log: %d %s", logged.Status, logged.Raw)
	}
	logs := tn.Get(t, apitest.ActionItemBase+id+"/logs", nil)
	if kinds := kindsOf(logs.Items()); !slices.Equal(kinds, []string{"STATUS_CHANGE", "PROGRESS"}) {
		t.Fatalf("logs: %v", kinds)
	}
	if logs.Items()[0]["message"] != "OPEN -> IN_PROGRESS" {
		t.Errorf("status log message: %v", logs.Items()[0]["message"])
	}
	if k := kindsOf(tn.Get(t, apitest.ActionItemBase+id+"/logs",
		map[string]string{"kind": "PROGRESS"}).Items()); !slices.Equal(k, []string{"PROGRESS"}) {
		t.Errorf("kind filter: %v", k)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+id+"/log",
		map[string]any{"kind": "STATUS_CHANGE", "message": "forged"}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+id+"/log",
		map[string]any{"kind": "NOTE", "message": " "}), 400, "VALIDATION_FAILED")

	tn.Do(t, "POST", apitest.ActionItemBase+"archive", map[string]any{"actionItemId": id})
	if ids := tn.Get(t, apitest.ActionItemBase+"list", nil).IDs(); slices.Contains(ids, id) {
		t.Error("archived item listed")
	}
	tn.Do(t, "POST", apitest.ActionItemBase+"restore", map[string]any{"actionItemId": id})
	del := tn.Do(t, "POST", apitest.ActionItemBase+"delete", map[string]any{"actionItemId": id})
	if del.Status != 201 || del.Data()["deleted"] != true {
		t.Fatalf("delete: %s", del.Raw)
	}
	apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+"detail", map[string]string{"id": id}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+id+"/logs", nil), 404, "NOT_FOUND")

	var types []string
	for _, e := range tn.Events(t) {
		if e.Jobs != 1 {
			t.Errorf("%s has %d jobs", e.Type, e.Jobs)
		}
		types = append(types, e.Type)
	}
	want := []string{"action-item.created", "project.created", "action-item.project_attached",
		"action-item.status_changed", "action-item.updated",
		"action-item.logged", "action-item.archived", "action-item.restored", "action-item.deleted"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v\nwant   %v", types, want)
	}
}

func kindsOf(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["kind"].(string))
	}
	return out
}

func TestActionItemTransitions(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	all := []string{"OPEN", "IN_PROGRESS", "DONE", "CANCELLED"}
	allowed := map[string][]string{
		"OPEN": {"IN_PROGRESS", "DONE", "CANCELLED"}, "IN_PROGRESS": {"DONE", "OPEN", "CANCELLED"},
		"DONE": {"IN_PROGRESS"}, "CANCELLED": {"OPEN"},
	}
	// A path from OPEN to each state, through allowed moves.
	reach := map[string][]string{"OPEN": nil, "IN_PROGRESS": {"IN_PROGRESS"}, "DONE": {"DONE"},
		"CANCELLED": {"CANCELLED"}}
	for _, from := range all {
		for _, to := range all {
			t.Run(from+"->"+to, func(t *testing.T) {
				id := tn.CreateActionItem(t, map[string]any{"title": from + to})["id"].(string)
				for _, step := range reach[from] {
					if r := tn.Do(t, "POST", apitest.ActionItemBase+"update",
						map[string]any{"actionItemId": id, "status": step}); r.Status != 201 {
						t.Fatalf("reaching %s: %s", from, r.Raw)
					}
				}
				r := tn.Do(t, "POST", apitest.ActionItemBase+"update",
					map[string]any{"actionItemId": id, "status": to})
				if slices.Contains(allowed[from], to) {
					if r.Status != 201 || r.Str("status") != to {
						t.Fatalf("allowed move refused: %d %s", r.Status, r.Raw)
					}
					return
				}
				apitest.WantError(t, r, 400, "INVALID_TRANSITION")
				d := r.Body["error"].(map[string]any)["details"].(map[string]any)
				if d["from"] != from || d["to"] != to {
					t.Errorf("details %v", d)
				}
			})
		}
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+"update",
		map[string]any{"actionItemId": tn.CreateActionItem(t, map[string]any{"title": "x"})["id"],
			"status": "PAUSED"}), 400, "VALIDATION_FAILED")
}

func TestActionItemListFiltersAndSorts(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "P"})["id"].(string)
	a := tn.CreateActionItem(t, map[string]any{"title": "Alpha gasket", "ownerHint": "Quality team",
		"dueDate": "2026-12-10T00:00:00Z", "projectId": prj})["id"].(string)
	b := tn.CreateActionItem(t, map[string]any{"title": "beta valve", "description": "replace the gasket seal",
		"dueDate": "2026-12-01T00:00:00Z"})["id"].(string)
	c := tn.CreateActionItem(t, map[string]any{"title": "Gamma"})["id"].(string)
	tn.Do(t, "POST", apitest.ActionItemBase+"update", map[string]any{"actionItemId": b, "status": "DONE"})
	arch := tn.CreateActionItem(t, map[string]any{"title": "Archived gasket"})["id"].(string)
	tn.Do(t, "POST", apitest.ActionItemBase+"archive", map[string]any{"actionItemId": arch})
	after := time.Now().UTC().Format(time.RFC3339Nano)

	cases := []struct {
		q    map[string]string
		want []string
	}{
		{map[string]string{}, []string{c, b, a}},
		{map[string]string{"status": "DONE"}, []string{b}},
		{map[string]string{"projectId": prj}, []string{a}},
		{map[string]string{"ownerHint": "quality"}, []string{a}},
		{map[string]string{"q": "GASKET"}, []string{b, a}},
		{map[string]string{"q": "gasket", "includeArchived": "true"}, []string{arch, b, a}},
		{map[string]string{"dueAfter": "2026-12-05T00:00:00Z"}, []string{a}},
		{map[string]string{"dueBefore": "2026-12-05T00:00:00Z"}, []string{b}},
		{map[string]string{"createdAfter": after}, nil},
		{map[string]string{"createdBefore": after}, []string{c, b, a}},
		{map[string]string{"sort": "dueDate", "sortDir": "asc"}, []string{b, a, c}},
		{map[string]string{"sort": "dueDate", "sortDir": "desc"}, []string{c, a, b}},
		{map[string]string{"sort": "title", "sortDir": "asc"}, []string{a, c, b}},
		{map[string]string{"sort": "createdAt", "sortDir": "asc"}, []string{a, b, c}},
		{map[string]string{"sort": "updatedAt", "sortDir": "desc"}, []string{b, c, a}}, // b moved to DONE last
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.q), func(t *testing.T) {
			if got := tn.Get(t, apitest.ActionItemBase+"list", tc.q).IDs(); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// Paging through a sort visits everything once.
	for _, sort := range []string{"dueDate", "title", "createdAt"} {
		var seen []string
		q := map[string]string{"sort": sort, "sortDir": "asc", "limit": "1"}
		for i := 0; i < 10; i++ {
			r := tn.Get(t, apitest.ActionItemBase+"list", q)
			seen = append(seen, r.IDs()...)
			next, ok := r.Data()["nextCursor"].(string)
			if !ok {
				break
			}
			q["cursor"] = next
		}
		if len(seen) != 3 {
			t.Errorf("paging by %s saw %v", sort, seen)
		}
	}
	for _, bad := range []map[string]string{{"sort": "priority"}, {"sortDir": "up"}, {"status": "NEW"},
		{"dueAfter": "soon"}, {"projectId": "x"}} {
		apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+"list", bad), 400, "VALIDATION_FAILED")
	}
	r := tn.Get(t, apitest.ActionItemBase+"list", map[string]string{"sort": "title", "limit": "1"})
	apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+"list",
		map[string]string{"sort": "dueDate", "cursor": r.Data()["nextCursor"].(string)}), 400, "VALIDATION_FAILED")
}

func TestActionItemBatch(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	existing := tn.CreateActionItem(t, map[string]any{"title": "existing"})["id"].(string)
	r := tn.Do(t, "POST", apitest.ActionItemBase+"batch", map[string]any{"operations": []map[string]any{
		{"op": "create", "title": "one"},
		{"op": "update", "actionItemId": existing, "status": "DONE"},
		{"op": "update", "actionItemId": existing, "status": "CANCELLED"},
		{"op": "archive", "actionItemId": "act_missing"},
	}})
	if r.Status != 201 {
		t.Fatalf("batch: %d %s", r.Status, r.Raw)
	}
	res := r.Data()["results"].([]any)
	okays := []bool{}
	for _, x := range res {
		okays = append(okays, x.(map[string]any)["success"].(bool))
	}
	if !slices.Equal(okays, []bool{true, true, false, false}) {
		t.Fatalf("results %v", res)
	}
	if code := res[2].(map[string]any)["error"].(map[string]any)["code"]; code != "INVALID_TRANSITION" {
		t.Errorf("item 2 error %v", code)
	}

	before := len(tn.Events(t))
	atomic := tn.Do(t, "POST", apitest.ActionItemBase+"batch",
		map[string]any{"atomic": true, "operations": []map[string]any{
			{"op": "create", "title": "kept only if all pass"},
			{"op": "update", "actionItemId": existing, "status": "OPEN"},
			{"op": "create", "title": "three"},
		}})
	apitest.WantError(t, atomic, 400, "INVALID_TRANSITION")
	if atomic.Body["error"].(map[string]any)["details"].(map[string]any)["index"] != float64(1) {
		t.Errorf("atomic failure details: %s", atomic.Raw)
	}
	if after := len(tn.Events(t)); after != before {
		t.Errorf("a failed atomic batch wrote %d events", after-before)
	}
	if ids := tn.Get(t, apitest.ActionItemBase+"list", map[string]string{"q": "kept only"}).IDs(); len(ids) != 0 {
		t.Error("a failed atomic batch created an item")
	}
	ok := tn.Do(t, "POST", apitest.ActionItemBase+"batch",
		map[string]any{"atomic": true, "operations": []map[string]any{{"op": "create", "title": "a"},
			{"op": "create", "title": "b"}}})
	if ok.Status != 201 || len(ok.Data()["results"].([]any)) != 2 {
		t.Fatalf("atomic success: %d %s", ok.Status, ok.Raw)
	}
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = map[string]any{"op": "create", "title": "x"}
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+"batch", map[string]any{"operations": many}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+"batch",
		map[string]any{"operations": []map[string]any{{"op": "explode"}}}), 400, "VALIDATION_FAILED")
}

func TestActionItemsIsolationAndScopes(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	id := a.CreateActionItem(t, map[string]any{"title": "private"})["id"].(string)
	bp := b.CreateProject(t, map[string]any{"name": "b"})["id"].(string)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.ActionItemBase + "detail?id=" + id, nil},
		{"GET", apitest.ActionItemBase + id + "/logs", nil},
		{"POST", apitest.ActionItemBase + id + "/log", map[string]any{"kind": "NOTE", "message": "x"}},
		{"POST", apitest.ActionItemBase + "update", map[string]any{"actionItemId": id, "title": "mine"}},
		{"POST", apitest.ActionItemBase + "attach-project", map[string]any{"actionItemId": id, "projectId": bp}},
		{"POST", apitest.ActionItemBase + "archive", map[string]any{"actionItemId": id}},
		{"POST", apitest.ActionItemBase + "restore", map[string]any{"actionItemId": id}},
		{"POST", apitest.ActionItemBase + "delete", map[string]any{"actionItemId": id}},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	if ids := b.Get(t, apitest.ActionItemBase+"list",
		map[string]string{"includeArchived": "true"}).IDs(); len(ids) != 0 {
		t.Errorf("B lists A's items: %v", ids)
	}
	// A's item cannot be attached to B's project, nor B's to A's.
	ap := a.CreateProject(t, map[string]any{"name": "a"})["id"].(string)
	bi := b.CreateActionItem(t, map[string]any{"title": "b"})["id"].(string)
	apitest.WantError(t, b.Do(t, "POST", apitest.ActionItemBase+"attach-project",
		map[string]any{"actionItemId": bi, "projectId": ap}), 404, "NOT_FOUND")
	// A batch naming A's item fails that operation as not found.
	br := b.Do(t, "POST", apitest.ActionItemBase+"batch",
		map[string]any{"operations": []map[string]any{{"op": "update", "actionItemId": id, "title": "mine"}}})
	if br.Status != 201 {
		t.Fatalf("batch: %d %s", br.Status, br.Raw)
	}
	if res := br.Data()["results"].([]any)[0].(map[string]any); res["success"] != false ||
		res["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Errorf("batch on another workspace's item: %v", res)
	}
	if got := a.Get(t, apitest.ActionItemBase+"detail", map[string]string{"id": id}); got.Str("title") != "private" {
		t.Errorf("A's item changed: %s", got.Raw)
	}
	ro := a.WithKey(a.NewKey(t, "action-items:read"))
	for _, tc := range []struct {
		path string
		body any
	}{
		{apitest.ActionItemBase + "create", map[string]any{"title": "x"}},
		{apitest.ActionItemBase + "attach-project", map[string]any{"actionItemId": id, "projectId": ap}},
		{apitest.ActionItemBase + "update", map[string]any{"actionItemId": id, "title": "y"}},
		{apitest.ActionItemBase + "archive", map[string]any{"actionItemId": id}},
		{apitest.ActionItemBase + "restore", map[string]any{"actionItemId": id}},
		{apitest.ActionItemBase + "delete", map[string]any{"actionItemId": id}},
		{apitest.ActionItemBase + "batch",
			map[string]any{"operations": []map[string]any{{"op": "create", "title": "x"}}}},
		{apitest.ActionItemBase + id + "/log", map[string]any{"kind": "NOTE", "message": "x"}},
	} {
		apitest.WantError(t, ro.Do(t, "POST", tc.path, tc.body), 403, "INSUFFICIENT_SCOPE")
	}
	if got := ro.Get(t, apitest.ActionItemBase+"list", nil); got.Status != 200 {
		t.Errorf("read: %d", got.Status)
	}
	if got := ro.Get(t, apitest.ActionItemBase+id+"/logs", nil); got.Status != 200 {
		t.Errorf("read logs: %d", got.Status)
	}
	none := a.WithKey(a.NewKey(t, "tasks:read"))
	apitest.WantError(t, none.Get(t, apitest.ActionItemBase+"list", nil), 403, "INSUFFICIENT_SCOPE")
	apitest.WantError(t, none.Get(t, apitest.ActionItemBase+id+"/logs", nil), 403, "INSUFFICIENT_SCOPE")
}

func TestExecutionLogsAreAppendOnlyInTheDatabase(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateActionItem(t, map[string]any{"title": "x"})["id"].(string)
	tn.Do(t, "POST", apitest.ActionItemBase+id+"/log", map[string]any{"kind": "NOTE", "message": "first"})
	if err := tn.ExecAsServer(t, "update execution_logs set message = 'rewritten'"); err == nil {
		t.Error("the server role may rewrite execution logs")
	}
	if err := tn.ExecAsServer(t, "delete from execution_logs"); err == nil {
		t.Error("the server role may delete execution logs")
	}
}

func TestExecutionLogKindsAndLimit(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateActionItem(t, map[string]any{"title": "x"})["id"].(string)
	for _, kind := range []string{"NOTE", "PROGRESS", "BLOCKER", "EVIDENCE"} {
		if r := tn.Do(t, "POST", apitest.ActionItemBase+id+"/log",
			map[string]any{"kind": kind, "message": kind + " entry"}); r.Status != 201 || r.Str("kind") != kind {
			t.Fatalf("log %s: %d %s", kind, r.Status, r.Raw)
		}
	}
	if k := kindsOf(tn.Get(t, apitest.ActionItemBase+id+"/logs", nil).Items()); !slices.Equal(k,
		[]string{"NOTE", "PROGRESS", "BLOCKER", "EVIDENCE"}) {
		t.Errorf("logs %v", k)
	}
	if k := kindsOf(tn.Get(t, apitest.ActionItemBase+id+"/logs",
		map[string]string{"limit": "2"}).Items()); len(k) != 2 {
		t.Errorf("limit 2 gave %v", k)
	}
	if k := kindsOf(tn.Get(t, apitest.ActionItemBase+id+"/logs",
		map[string]string{"kind": "BLOCKER"}).Items()); !slices.Equal(k, []string{"BLOCKER"}) {
		t.Errorf("kind filter %v", k)
	}
	apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+id+"/logs", map[string]string{"kind": "GOSSIP"}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Do(t, "POST", apitest.ActionItemBase+id+"/log",
		map[string]any{"kind": "GOSSIP", "message": "x"}), 400, "VALIDATION_FAILED")
}
