package rrca_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestRRCAPhasesAndGates(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	id := tn.CreateRRCA(t, map[string]any{"title": "Hydraulic leak on press 2",
		"problemStatement": "Oil on the floor after every shift", "projectId": prj})

	for _, want := range []string{"CONTAIN", "ANALYZE"} {
		if r := tn.Advance(t, id); r.Status != 201 || r.Str("phase") != want {
			t.Fatalf("advance to %s: %d %s", want, r.Status, r.Raw)
		}
	}
	gate := func(name string) {
		t.Helper()
		r := tn.Advance(t, id)
		apitest.WantError(t, r, 409, "GATE_NOT_MET")
		if g := r.Body["error"].(map[string]any)["details"].(map[string]any)["gate"]; g != name {
			t.Fatalf("gate %v, want %s", g, name)
		}
	}
	gate("ROOT_CAUSE_IDENTIFIED")
	problem := tn.AddNode(t, id, "PROBLEM", "Oil on the floor", "")
	why := tn.AddNode(t, id, "WHY", "Seal leaks", problem)
	root := tn.AddNode(t, id, "ROOT_CAUSE", "Seal not torqued at assembly", why)
	if r := tn.Advance(t, id); r.Status != 201 || r.Str("phase") != "CORRECT" {
		t.Fatalf("advance to CORRECT: %s", r.Raw)
	}
	gate("CORRECTIVE_ACTION_DEFINED")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/corrective-actions",
		map[string]any{"nodeId": why, "title": "x"}), 400, "VALIDATION_FAILED")
	ca := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/corrective-actions",
		map[string]any{"nodeId": root, "title": "Add torque check", "ownerHint": "Assembly"})
	if ca.Status != 201 {
		t.Fatalf("corrective action: %d %s", ca.Status, ca.Raw)
	}
	item := ca.Data()["actionItem"].(map[string]any)
	if item["source"] != "CORRECTIVE_ACTION" || item["sourceRrcaId"] != id || item["sourceNodeId"] != root ||
		item["projectId"] != prj {
		t.Fatalf("action item links: %v", item)
	}
	if ca.Str("correctiveAction.actionItemId") != item["id"] || ca.Str("correctiveAction.nodeId") != root {
		t.Fatalf("corrective action links: %s", ca.Raw)
	}
	if r := tn.Advance(t, id); r.Str("phase") != "VERIFY" {
		t.Fatalf("advance to VERIFY: %s", r.Raw)
	}
	gate("CORRECTIVE_ACTIONS_CLOSED")
	tn.Do(t, "POST", apitest.ActionItemBase+"update", map[string]any{"actionItemId": item["id"], "status": "DONE"})
	if r := tn.Advance(t, id); r.Str("phase") != "CLOSED" {
		t.Fatalf("advance to CLOSED: %s", r.Raw)
	}
	apitest.WantError(t, tn.Advance(t, id), 409, "CONFLICT")

	detail := tn.Get(t, apitest.RRCABase+"/"+id, nil)
	hist := detail.Data()["phaseHistory"].([]any)
	if detail.Status != 200 || len(hist) != 5 || detail.Data()["nodeCount"] != float64(3) ||
		len(detail.Data()["correctiveActions"].([]any)) != 1 {
		t.Fatalf("detail: %s", detail.Raw)
	}
	if cas := tn.Get(t, apitest.RRCABase+"/"+id+"/corrective-actions",
		nil); cas.Items()[0]["actionItemStatus"] != "DONE" {
		t.Errorf("corrective list: %s", cas.Raw)
	}
	// Phases never go back or skip.
	other := tn.CreateRRCA(t, map[string]any{"title": "other"})
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+other+"/advance", map[string]any{"to": "ANALYZE"}),
		400, "INVALID_TRANSITION")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+other+"/advance", map[string]any{"to": "DEFINE"}),
		400, "INVALID_TRANSITION")
	if r := tn.Do(t, "POST", apitest.RRCABase+"/"+other+"/advance",
		map[string]any{"to": "CONTAIN"}); r.Str("phase") != "CONTAIN" {
		t.Errorf("guarded advance: %s", r.Raw)
	}
}

func TestRRCANodeTreeDeletesExactlyTheSubtree(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateRRCA(t, map[string]any{"title": "tree"})
	p := tn.AddNode(t, id, "PROBLEM", "p", "")
	w1 := tn.AddNode(t, id, "WHY", "w1", p)
	w2 := tn.AddNode(t, id, "WHY", "w2", w1)
	ev := tn.AddNode(t, id, "EVIDENCE", "photo", w2)
	sibling := tn.AddNode(t, id, "WHY", "other branch", p)
	cause := tn.AddNode(t, id, "CAUSE", "c", sibling)

	r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+w1, nil)
	if r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	deleted := apitest.Strings(r.Data()["deleted"])
	slices.Sort(deleted)
	want := []string{w1, w2, ev}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	left := tn.Get(t, apitest.RRCABase+"/"+id+"/nodes", nil).IDs()
	if !slices.Equal(left, []string{p, sibling, cause}) {
		t.Errorf("left %v", left)
	}
	causes := tn.Get(t, apitest.RRCABase+"/"+id+"/nodes", map[string]string{"kind": "CAUSE"}).IDs()
	if !slices.Equal(causes, []string{cause}) {
		t.Errorf("kind filter: %v", causes)
	}
	// A parent from another analysis is refused.
	other := tn.CreateRRCA(t, map[string]any{"title": "other"})
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+other+"/nodes",
		map[string]any{"kind": "WHY", "text": "x", "parentId": p}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/nodes",
		map[string]any{"kind": "WHY_SUGGESTION", "text": "x"}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Do(t, "DELETE", apitest.RRCABase+"/"+other+"/nodes/"+p, nil), 404, "NOT_FOUND")
}

func TestRRCAListFiltersIsolationAndScopes(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	p1 := a.CreateProject(t, map[string]any{"name": "p1"})["id"].(string)
	x := a.CreateRRCA(t, map[string]any{"title": "x", "projectId": p1})
	y := a.CreateRRCA(t, map[string]any{"title": "y"})
	a.Advance(t, y)
	arch := a.CreateRRCA(t, map[string]any{"title": "z"})
	a.Do(t, "POST", apitest.RRCABase+"/"+arch+"/archive", nil)
	for q, want := range map[string][]string{"": {y, x}, "phase=CONTAIN": {y}, "projectId=" + p1: {x},
		"includeArchived=true": {arch, y, x}} {
		path := apitest.RRCABase
		if q != "" {
			path += "?" + q
		}
		if got := a.Do(t, "GET", path, nil).IDs(); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	apitest.WantError(t, a.Get(t, apitest.RRCABase, map[string]string{"phase": "DONE"}), 400, "VALIDATION_FAILED")
	if ids := a.Get(t, apitest.RRCABase, map[string]string{"limit": "1"}).IDs(); len(ids) != 1 {
		t.Errorf("limit 1 gave %v", ids)
	}
	// No worker runs here, so the similarity job queued on create is pending.
	if sim := a.Get(t, apitest.RRCABase+"/"+x+"/similar", map[string]string{"limit": "5"}); sim.Status != 200 ||
		sim.Data()["pending"] != true {
		t.Errorf("similar before its job ran: %d %s", sim.Status, sim.Raw)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.RRCABase + "/" + x, nil}, {"PATCH", apitest.RRCABase + "/" + x,
			map[string]any{"title": "mine"}},
		{"POST", apitest.RRCABase + "/" + x + "/advance", nil}, {"POST", apitest.RRCABase + "/" + x + "/archive", nil},
		{"GET", apitest.RRCABase + "/" + x + "/nodes", nil},
		{"POST", apitest.RRCABase + "/" + x + "/nodes", map[string]any{"kind": "WHY", "text": "x"}},
		{"GET", apitest.RRCABase + "/" + x + "/corrective-actions", nil},
		{"GET", apitest.RRCABase + "/" + x + "/similar", nil},
		{"POST", apitest.RRCABase + "/" + x + "/5why/suggest", nil},
		{"GET", apitest.RRCABase + "/" + x + "/look-across", nil},
		{"POST", apitest.RRCABase + "/" + x + "/look-across/suggest", nil},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	if ids := b.Get(t, apitest.RRCABase, map[string]string{"includeArchived": "true"}).IDs(); len(ids) != 0 {
		t.Errorf("B lists A's analyses: %v", ids)
	}
	// A's nodes, corrective actions and suggestion runs are as invisible to B.
	root := a.AddNode(t, x, "ROOT_CAUSE", "root", "")
	fiveWhy := a.Do(t, "POST", apitest.RRCABase+"/"+x+"/5why/suggest", nil).Str("id")
	lookAcross := a.Do(t, "POST", apitest.RRCABase+"/"+x+"/look-across/suggest", nil).Str("id")
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"DELETE", apitest.RRCABase + "/" + x + "/nodes/" + root, nil},
		{"POST", apitest.RRCABase + "/" + x + "/nodes/" + root + "/accept", nil},
		{"POST", apitest.RRCABase + "/" + x + "/corrective-actions", map[string]any{"nodeId": root, "title": "mine"}},
		{"GET", apitest.RRCABase + "/" + x + "/5why/suggestions/" + fiveWhy, nil},
		{"GET", apitest.RRCABase + "/" + x + "/look-across/runs/" + lookAcross, nil},
		{"POST", apitest.RRCABase + "/" + x + "/restore", nil},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	if n := a.Get(t, apitest.RRCABase+"/"+x+"/nodes", nil).IDs(); len(n) != 1 || n[0] != root {
		t.Errorf("A's nodes after B's attempts: %v", n)
	}
	// Restore brings an archived analysis back into the list.
	if r := a.Do(t, "POST", apitest.RRCABase+"/"+arch+"/restore", nil); r.Status != 201 {
		t.Fatalf("restore: %d %s", r.Status, r.Raw)
	}
	if ids := a.Get(t, apitest.RRCABase, nil).IDs(); !slices.Contains(ids, arch) {
		t.Errorf("restored analysis not listed: %v", ids)
	}

	ro := a.WithKey(a.NewKey(t, "rrca:read"))
	sug := apitest.RRCABase + "/" + x + "/look-across/lac_00000000000000000000000000"
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", apitest.RRCABase, map[string]any{"title": "x"}},
		{"PATCH", apitest.RRCABase + "/" + x, map[string]any{"title": "y"}},
		{"POST", apitest.RRCABase + "/" + x + "/advance", nil},
		{"POST", apitest.RRCABase + "/" + x + "/archive", nil},
		{"POST", apitest.RRCABase + "/" + x + "/restore", nil},
		{"POST", apitest.RRCABase + "/" + x + "/nodes", map[string]any{"kind": "WHY", "text": "x"}},
		{"DELETE", apitest.RRCABase + "/" + x + "/nodes/" + root, nil},
		{"POST", apitest.RRCABase + "/" + x + "/nodes/" + root + "/accept", nil},
		{"POST", apitest.RRCABase + "/" + x + "/corrective-actions", map[string]any{"nodeId": root, "title": "t"}},
		{"POST", apitest.RRCABase + "/" + x + "/5why/suggest", nil},
		{"POST", apitest.RRCABase + "/" + x + "/look-across/suggest", nil},
		{"POST", sug + "/apply", nil},
		{"POST", sug + "/reject", map[string]any{"reason": "r"}},
	} {
		apitest.WantError(t, ro.Do(t, tc.method, tc.path, tc.body), 403, "INSUFFICIENT_SCOPE")
	}
	for _, path := range []string{apitest.RRCABase, apitest.RRCABase + "/" + x, apitest.RRCABase + "/" + x + "/nodes",
		apitest.RRCABase + "/" + x + "/corrective-actions",
		apitest.RRCABase + "/" + x + "/similar", apitest.RRCABase + "/" + x + "/look-across",
		apitest.RRCABase + "/" + x + "/5why/suggestions/" + fiveWhy,
		apitest.RRCABase + "/" + x + "/look-across/runs/" + lookAcross} {
		if r := ro.Get(t, path, nil); r.Status != 200 {
			t.Errorf("GET %s with rrca:read: %d %s", path, r.Status, r.Raw)
		}
	}
	none := a.WithKey(a.NewKey(t, "tasks:read"))
	apitest.WantError(t, none.Get(t, apitest.RRCABase, nil), 403, "INSUFFICIENT_SCOPE")
	apitest.WantError(t, none.Get(t, apitest.RRCABase+"/"+x+"/similar", nil), 403, "INSUFFICIENT_SCOPE")
}

func TestRRCASimilarIsRecomputedByAJob(t *testing.T) {
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	leak := tn.CreateRRCA(t, map[string]any{"title": "Hydraulic oil leak at press seal",
		"problemStatement": "The press seal leaks hydraulic oil during the night shift"})
	twin := tn.CreateRRCA(t, map[string]any{"title": "Press seal leaking oil",
		"problemStatement": "Hydraulic oil leaks from the seal of press 3 at night"})
	other := tn.CreateRRCA(t, map[string]any{"title": "Invoice printed twice",
		"problemStatement": "Customers receive duplicate invoices from billing"})
	var items []map[string]any
	apitest.Eventually(t, apitest.JobWait, "similar computed", func() bool {
		r := tn.Get(t, apitest.RRCABase+"/"+leak+"/similar", nil)
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
	if tn.Get(t, apitest.RRCABase+"/"+leak+"/similar", nil).Data()["computedAt"] == nil {
		t.Error("computedAt missing")
	}
	if one := tn.Get(t, apitest.RRCABase+"/"+leak+"/similar",
		map[string]string{"limit": "1"}).Items(); len(one) != 1 || one[0]["rrcaId"] != twin {
		t.Errorf("limit 1: %v", one)
	}
}

// TestSimilarityRecomputationIsDebounced: with no worker running, a create,
// three node additions and a title change leave one queued recomputation for
// the analysis (River unique jobs), not five.
func TestSimilarityRecomputationIsDebounced(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateRRCA(t, map[string]any{"title": "Pump cavitation", "problemStatement": "Noise at the feed pump"})
	p := tn.AddNode(t, id, "PROBLEM", "noise", "")
	w := tn.AddNode(t, id, "WHY", "air in the suction line", p)
	tn.AddNode(t, id, "ROOT_CAUSE", "loose suction flange", w)
	if r := tn.Do(t, "PATCH", apitest.RRCABase+"/"+id,
		map[string]any{"title": "Feed pump cavitation"}); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	n := testdb.RiverCount(t, `select count(*) from river.river_job
		where kind = 'rrca.similarity' and args->>'workspaceId' = $1
		and state in ('available', 'scheduled', 'pending')`, tn.WorkspaceID)
	if n != 1 {
		t.Errorf("%d queued similarity jobs for one analysis, want 1", n)
	}
	if r := tn.Get(t, apitest.RRCABase+"/"+id+"/similar", nil); r.Data()["pending"] != true {
		t.Errorf("pending not reported: %s", r.Raw)
	}
}

// TestRootCauseStaysPastAnalyze: once an analysis has left ANALYZE, whose gate
// needed a ROOT_CAUSE, deleting the node whose subtree holds its last one
// (the WHY above it, or the ROOT_CAUSE itself) is 409 GATE_NOT_MET and
// removes nothing; with a second ROOT_CAUSE elsewhere the delete goes ahead.
func TestRootCauseStaysPastAnalyze(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	id := tn.CreateRRCA(t, map[string]any{"title": "Leak", "problemStatement": "Oil", "projectId": prj})
	tn.Advance(t, id)
	tn.Advance(t, id)
	problem := tn.AddNode(t, id, "PROBLEM", "Oil on the floor", "")
	why := tn.AddNode(t, id, "WHY", "Seal leaks", problem)
	root := tn.AddNode(t, id, "ROOT_CAUSE", "Seal not torqued", why)
	// In ANALYZE the tree is still being built: a delete is fine.
	extra := tn.AddNode(t, id, "WHY", "spare", problem)
	if r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+tn.AddNode(t, id, "ROOT_CAUSE", "early guess", extra),
		nil); r.Status != 200 {
		t.Fatalf("delete in ANALYZE: %d %s", r.Status, r.Raw)
	}
	tn.Advance(t, id)
	ca := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/corrective-actions",
		map[string]any{"nodeId": root, "title": "Torque check"})
	item := ca.Data()["actionItem"].(map[string]any)["id"]
	if r := tn.Advance(t, id); r.Str("phase") != "VERIFY" {
		t.Fatalf("advance to VERIFY: %s", r.Raw)
	}
	for _, node := range []string{problem, why, root} {
		r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+node, nil)
		apitest.WantError(t, r, 409, "GATE_NOT_MET")
		if g := r.Body["error"].(map[string]any)["details"].(map[string]any)["gate"]; g != "ROOT_CAUSE_IDENTIFIED" {
			t.Errorf("gate %v", g)
		}
	}
	if n := len(tn.Get(t, apitest.RRCABase+"/"+id+"/nodes", nil).Items()); n != 4 {
		t.Fatalf("%d nodes left, want all 4", n)
	}
	// Another ROOT_CAUSE elsewhere: the first branch may go.
	tn.AddNode(t, id, "ROOT_CAUSE", "Wrong seal supplied", extra)
	if r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+why, nil); r.Status != 200 {
		t.Fatalf("delete with another root cause: %d %s", r.Status, r.Raw)
	}
	tn.Do(t, "POST", apitest.ActionItemBase+"update", map[string]any{"actionItemId": item, "status": "DONE"})
	if r := tn.Advance(t, id); r.Str("phase") != "CLOSED" {
		t.Fatalf("advance to CLOSED: %s", r.Raw)
	}
}
