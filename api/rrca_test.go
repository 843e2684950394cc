package api_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

const rrcaBase = "/openapi/v1/resource/rrca"

func createRRCA(t *testing.T, tn *apitest.Tenant, body map[string]any) string {
	return tn.Created(t, rrcaBase, body)["id"].(string)
}

func addNode(t *testing.T, tn *apitest.Tenant, id, kind, text, parent string) string {
	t.Helper()
	body := map[string]any{"kind": kind, "text": text}
	if parent != "" {
		body["parentId"] = parent
	}
	r := tn.Do(t, "POST", rrcaBase+"/"+id+"/nodes", body)
	if r.Status != 201 {
		t.Fatalf("add node: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

func advance(tn *apitest.Tenant, t *testing.T, id string) *apitest.Response {
	t.Helper()
	return tn.Do(t, "POST", rrcaBase+"/"+id+"/advance", nil)
}

func TestRRCAPhasesAndGates(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	prj := createProject(t, tn, map[string]any{"name": "Line 4"})["id"].(string)
	id := createRRCA(t, tn, map[string]any{"title": "Hydraulic leak on press 2", "problemStatement": "Oil on the floor after every shift", "projectId": prj})

	for _, want := range []string{"CONTAIN", "ANALYZE"} {
		if r := advance(tn, t, id); r.Status != 201 || r.Str("phase") != want {
			t.Fatalf("advance to %s: %d %s", want, r.Status, r.Raw)
		}
	}
	gate := func(name string) {
		t.Helper()
		r := advance(tn, t, id)
		wantError(t, r, 409, "GATE_NOT_MET")
		if g := r.Body["error"].(map[string]any)["details"].(map[string]any)["gate"]; g != name {
			t.Fatalf("gate %v, want %s", g, name)
		}
	}
	gate("ROOT_CAUSE_IDENTIFIED")
	problem := addNode(t, tn, id, "PROBLEM", "Oil on the floor", "")
	why := addNode(t, tn, id, "WHY", "Seal leaks", problem)
	root := addNode(t, tn, id, "ROOT_CAUSE", "Seal not torqued at assembly", why)
	if r := advance(tn, t, id); r.Status != 201 || r.Str("phase") != "CORRECT" {
		t.Fatalf("advance to CORRECT: %s", r.Raw)
	}
	gate("CORRECTIVE_ACTION_DEFINED")
	wantError(t, tn.Do(t, "POST", rrcaBase+"/"+id+"/corrective-actions", map[string]any{"nodeId": why, "title": "x"}), 400, "VALIDATION_FAILED")
	ca := tn.Do(t, "POST", rrcaBase+"/"+id+"/corrective-actions", map[string]any{"nodeId": root, "title": "Add torque check", "ownerHint": "Assembly"})
	if ca.Status != 201 {
		t.Fatalf("corrective action: %d %s", ca.Status, ca.Raw)
	}
	item := ca.Data()["actionItem"].(map[string]any)
	if item["source"] != "CORRECTIVE_ACTION" || item["sourceRrcaId"] != id || item["sourceNodeId"] != root || item["projectId"] != prj {
		t.Fatalf("action item links: %v", item)
	}
	if ca.Str("correctiveAction.actionItemId") != item["id"] || ca.Str("correctiveAction.nodeId") != root {
		t.Fatalf("corrective action links: %s", ca.Raw)
	}
	if r := advance(tn, t, id); r.Str("phase") != "VERIFY" {
		t.Fatalf("advance to VERIFY: %s", r.Raw)
	}
	gate("CORRECTIVE_ACTIONS_CLOSED")
	tn.Do(t, "POST", aiBase+"update", map[string]any{"actionItemId": item["id"], "status": "DONE"})
	if r := advance(tn, t, id); r.Str("phase") != "CLOSED" {
		t.Fatalf("advance to CLOSED: %s", r.Raw)
	}
	wantError(t, advance(tn, t, id), 409, "CONFLICT")

	detail := tn.Get(t, rrcaBase+"/"+id, nil)
	hist := detail.Data()["phaseHistory"].([]any)
	if detail.Status != 200 || len(hist) != 5 || detail.Data()["nodeCount"] != float64(3) || len(detail.Data()["correctiveActions"].([]any)) != 1 {
		t.Fatalf("detail: %s", detail.Raw)
	}
	if cas := tn.Get(t, rrcaBase+"/"+id+"/corrective-actions", nil); cas.Items()[0]["actionItemStatus"] != "DONE" {
		t.Errorf("corrective list: %s", cas.Raw)
	}
	// Phases never go back or skip.
	other := createRRCA(t, tn, map[string]any{"title": "other"})
	wantError(t, tn.Do(t, "POST", rrcaBase+"/"+other+"/advance", map[string]any{"to": "ANALYZE"}), 400, "INVALID_TRANSITION")
	wantError(t, tn.Do(t, "POST", rrcaBase+"/"+other+"/advance", map[string]any{"to": "DEFINE"}), 400, "INVALID_TRANSITION")
	if r := tn.Do(t, "POST", rrcaBase+"/"+other+"/advance", map[string]any{"to": "CONTAIN"}); r.Str("phase") != "CONTAIN" {
		t.Errorf("guarded advance: %s", r.Raw)
	}
}

func TestRRCANodeTreeDeletesExactlyTheSubtree(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	id := createRRCA(t, tn, map[string]any{"title": "tree"})
	p := addNode(t, tn, id, "PROBLEM", "p", "")
	w1 := addNode(t, tn, id, "WHY", "w1", p)
	w2 := addNode(t, tn, id, "WHY", "w2", w1)
	ev := addNode(t, tn, id, "EVIDENCE", "photo", w2)
	sibling := addNode(t, tn, id, "WHY", "other branch", p)
	cause := addNode(t, tn, id, "CAUSE", "c", sibling)

	r := tn.Do(t, "DELETE", rrcaBase+"/"+id+"/nodes/"+w1, nil)
	if r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	deleted := toStrings(r.Data()["deleted"])
	slices.Sort(deleted)
	want := []string{w1, w2, ev}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	left := tn.Get(t, rrcaBase+"/"+id+"/nodes", nil).IDs()
	if !slices.Equal(left, []string{p, sibling, cause}) {
		t.Errorf("left %v", left)
	}
	if k := tn.Get(t, rrcaBase+"/"+id+"/nodes", map[string]string{"kind": "CAUSE"}).IDs(); !slices.Equal(k, []string{cause}) {
		t.Errorf("kind filter: %v", k)
	}
	// A parent from another analysis is refused.
	other := createRRCA(t, tn, map[string]any{"title": "other"})
	wantError(t, tn.Do(t, "POST", rrcaBase+"/"+other+"/nodes", map[string]any{"kind": "WHY", "text": "x", "parentId": p}), 400, "VALIDATION_FAILED")
	wantError(t, tn.Do(t, "POST", rrcaBase+"/"+id+"/nodes", map[string]any{"kind": "WHY_SUGGESTION", "text": "x"}), 400, "VALIDATION_FAILED")
	wantError(t, tn.Do(t, "DELETE", rrcaBase+"/"+other+"/nodes/"+p, nil), 404, "NOT_FOUND")
}

func TestRRCAListFiltersIsolationAndScopes(t *testing.T) {
	t.Parallel()
	a, b := twoTenants(t)
	p1 := createProject(t, a, map[string]any{"name": "p1"})["id"].(string)
	x := createRRCA(t, a, map[string]any{"title": "x", "projectId": p1})
	y := createRRCA(t, a, map[string]any{"title": "y"})
	advance(a, t, y)
	arch := createRRCA(t, a, map[string]any{"title": "z"})
	a.Do(t, "POST", rrcaBase+"/"+arch+"/archive", nil)
	for q, want := range map[string][]string{"": {y, x}, "phase=CONTAIN": {y}, "projectId=" + p1: {x}, "includeArchived=true": {arch, y, x}} {
		path := rrcaBase
		if q != "" {
			path += "?" + q
		}
		if got := a.Do(t, "GET", path, nil).IDs(); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	wantError(t, a.Get(t, rrcaBase, map[string]string{"phase": "DONE"}), 400, "VALIDATION_FAILED")
	if ids := a.Get(t, rrcaBase, map[string]string{"limit": "1"}).IDs(); len(ids) != 1 {
		t.Errorf("limit 1 gave %v", ids)
	}
	// No worker runs here, so the similarity job queued on create is pending.
	if sim := a.Get(t, rrcaBase+"/"+x+"/similar", map[string]string{"limit": "5"}); sim.Status != 200 || sim.Data()["pending"] != true {
		t.Errorf("similar before its job ran: %d %s", sim.Status, sim.Raw)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", rrcaBase + "/" + x, nil}, {"PATCH", rrcaBase + "/" + x, map[string]any{"title": "mine"}},
		{"POST", rrcaBase + "/" + x + "/advance", nil}, {"POST", rrcaBase + "/" + x + "/archive", nil},
		{"GET", rrcaBase + "/" + x + "/nodes", nil}, {"POST", rrcaBase + "/" + x + "/nodes", map[string]any{"kind": "WHY", "text": "x"}},
		{"GET", rrcaBase + "/" + x + "/corrective-actions", nil}, {"GET", rrcaBase + "/" + x + "/similar", nil},
		{"POST", rrcaBase + "/" + x + "/5why/suggest", nil}, {"GET", rrcaBase + "/" + x + "/look-across", nil},
		{"POST", rrcaBase + "/" + x + "/look-across/suggest", nil},
	} {
		wantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	if ids := b.Get(t, rrcaBase, map[string]string{"includeArchived": "true"}).IDs(); len(ids) != 0 {
		t.Errorf("B lists A's analyses: %v", ids)
	}
	// A's nodes, corrective actions and suggestion runs are as invisible to B.
	root := addNode(t, a, x, "ROOT_CAUSE", "root", "")
	fiveWhy := a.Do(t, "POST", rrcaBase+"/"+x+"/5why/suggest", nil).Str("id")
	lookAcross := a.Do(t, "POST", rrcaBase+"/"+x+"/look-across/suggest", nil).Str("id")
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"DELETE", rrcaBase + "/" + x + "/nodes/" + root, nil},
		{"POST", rrcaBase + "/" + x + "/nodes/" + root + "/accept", nil},
		{"POST", rrcaBase + "/" + x + "/corrective-actions", map[string]any{"nodeId": root, "title": "mine"}},
		{"GET", rrcaBase + "/" + x + "/5why/suggestions/" + fiveWhy, nil},
		{"GET", rrcaBase + "/" + x + "/look-across/runs/" + lookAcross, nil},
		{"POST", rrcaBase + "/" + x + "/restore", nil},
	} {
		wantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	if n := a.Get(t, rrcaBase+"/"+x+"/nodes", nil).IDs(); len(n) != 1 || n[0] != root {
		t.Errorf("A's nodes after B's attempts: %v", n)
	}
	// Restore brings an archived analysis back into the list.
	if r := a.Do(t, "POST", rrcaBase+"/"+arch+"/restore", nil); r.Status != 201 {
		t.Fatalf("restore: %d %s", r.Status, r.Raw)
	}
	if ids := a.Get(t, rrcaBase, nil).IDs(); !slices.Contains(ids, arch) {
		t.Errorf("restored analysis not listed: %v", ids)
	}

	ro := a.WithKey(a.NewKey(t, "rrca:read"))
	sug := rrcaBase + "/" + x + "/look-across/lac_00000000000000000000000000"
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", rrcaBase, map[string]any{"title": "x"}},
		{"PATCH", rrcaBase + "/" + x, map[string]any{"title": "y"}},
		{"POST", rrcaBase + "/" + x + "/advance", nil},
		{"POST", rrcaBase + "/" + x + "/archive", nil},
		{"POST", rrcaBase + "/" + x + "/restore", nil},
		{"POST", rrcaBase + "/" + x + "/nodes", map[string]any{"kind": "WHY", "text": "x"}},
		{"DELETE", rrcaBase + "/" + x + "/nodes/" + root, nil},
		{"POST", rrcaBase + "/" + x + "/nodes/" + root + "/accept", nil},
		{"POST", rrcaBase + "/" + x + "/corrective-actions", map[string]any{"nodeId": root, "title": "t"}},
		{"POST", rrcaBase + "/" + x + "/5why/suggest", nil},
		{"POST", rrcaBase + "/" + x + "/look-across/suggest", nil},
		{"POST", sug + "/apply", nil},
		{"POST", sug + "/reject", map[string]any{"reason": "r"}},
	} {
		wantError(t, ro.Do(t, tc.method, tc.path, tc.body), 403, "INSUFFICIENT_SCOPE")
	}
	for _, path := range []string{rrcaBase, rrcaBase + "/" + x, rrcaBase + "/" + x + "/nodes", rrcaBase + "/" + x + "/corrective-actions",
		rrcaBase + "/" + x + "/similar", rrcaBase + "/" + x + "/look-across", rrcaBase + "/" + x + "/5why/suggestions/" + fiveWhy,
		rrcaBase + "/" + x + "/look-across/runs/" + lookAcross} {
		if r := ro.Get(t, path, nil); r.Status != 200 {
			t.Errorf("GET %s with rrca:read: %d %s", path, r.Status, r.Raw)
		}
	}
	none := a.WithKey(a.NewKey(t, "tasks:read"))
	wantError(t, none.Get(t, rrcaBase, nil), 403, "INSUFFICIENT_SCOPE")
	wantError(t, none.Get(t, rrcaBase+"/"+x+"/similar", nil), 403, "INSUFFICIENT_SCOPE")
}

func TestRRCASimilarIsRecomputedByAJob(t *testing.T) {
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	leak := createRRCA(t, tn, map[string]any{"title": "Hydraulic oil leak at press seal", "problemStatement": "The press seal leaks hydraulic oil during the night shift"})
	twin := createRRCA(t, tn, map[string]any{"title": "Press seal leaking oil", "problemStatement": "Hydraulic oil leaks from the seal of press 3 at night"})
	other := createRRCA(t, tn, map[string]any{"title": "Invoice printed twice", "problemStatement": "Customers receive duplicate invoices from billing"})
	var items []map[string]any
	apitest.Eventually(t, apitest.JobWait, "similar computed", func() bool {
		r := tn.Get(t, rrcaBase+"/"+leak+"/similar", nil)
		items = r.Items()
		return r.Data()["pending"] == false && len(items) > 0
	})
	if items[0]["rrcaId"] != twin {
		t.Fatalf("top similar %v, want the twin %s", items[0]["rrcaId"], twin)
	}
	for _, it := range items {
		if it["rrcaId"] == other && it["score"].(float64) >= items[0]["score"].(float64) {
			t.Errorf("unrelated analysis scores as high as the twin: %v", items)
		}
	}
	if tn.Get(t, rrcaBase+"/"+leak+"/similar", nil).Data()["computedAt"] == nil {
		t.Error("computedAt missing")
	}
	if one := tn.Get(t, rrcaBase+"/"+leak+"/similar", map[string]string{"limit": "1"}).Items(); len(one) != 1 || one[0]["rrcaId"] != twin {
		t.Errorf("limit 1: %v", one)
	}
}

// TestSimilarityRecomputationIsDebounced: with no worker running, a create,
// three node additions and a title change leave one queued recomputation for
// the analysis (River unique jobs), not five.
func TestSimilarityRecomputationIsDebounced(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	id := createRRCA(t, tn, map[string]any{"title": "Pump cavitation", "problemStatement": "Noise at the feed pump"})
	p := addNode(t, tn, id, "PROBLEM", "noise", "")
	w := addNode(t, tn, id, "WHY", "air in the suction line", p)
	addNode(t, tn, id, "ROOT_CAUSE", "loose suction flange", w)
	if r := tn.Do(t, "PATCH", rrcaBase+"/"+id, map[string]any{"title": "Feed pump cavitation"}); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	var n int
	if err := testdb.AppPool(t).QueryRow(context.Background(), `select count(*) from river.river_job
		where kind = 'rrca.similarity' and args->>'workspaceId' = $1 and state in ('available', 'scheduled', 'pending')`, tn.WorkspaceID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d queued similarity jobs for one analysis, want 1", n)
	}
	if r := tn.Get(t, rrcaBase+"/"+id+"/similar", nil); r.Data()["pending"] != true {
		t.Errorf("pending not reported: %s", r.Raw)
	}
}
