package rrca_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func waitRun(t *testing.T, tn *apitest.Tenant, path string) *apitest.Response {
	t.Helper()
	var r *apitest.Response
	apitest.Eventually(t, apitest.JobWait, "run READY", func() bool {
		r = tn.Get(t, path, nil)
		return r.Str("status") == "READY" || r.Str("status") == "FAILED"
	})
	if r.Str("status") != "READY" {
		t.Fatalf("run ended %s", r.Raw)
	}
	return r
}

func TestFiveWhySuggestionsFromSimilarAnalysesAndRisks(t *testing.T) {
	// Events leave the outbox once fanned out: a subscription hears of the
	// run's end.
	rcv := apitest.NewReceiver(t)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "rrca.suggestions_ready")
	p1 := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	p2 := tn.CreateProject(t, map[string]any{"name": "Line 7"})["id"].(string)
	// A finished analysis of the same failure elsewhere, with its why chain.
	old := tn.CreateRRCA(t, map[string]any{"title": "Hydraulic oil leak at press seal",
		"problemStatement": "Press seal leaks hydraulic oil", "projectId": p2})
	w := tn.AddNode(t, old, "WHY", "Seal lip cut during installation", "")
	tn.AddNode(t, old, "ROOT_CAUSE", "No torque check of the gland nut at assembly", w)
	tn.CreateRisk(t, map[string]any{"projectId": p1, "title": "Hydraulic seal kits from a new supplier",
		"description": "seal quality unknown, press leaks possible"})

	id := tn.CreateRRCA(t, map[string]any{"title": "Oil leaking from press cylinder seal",
		"problemStatement": "Hydraulic oil leaks at the press seal every night", "projectId": p1})
	why := tn.AddNode(t, id, "WHY", "The seal is damaged", "")
	deeper := tn.AddNode(t, id, "WHY", "The seal was pinched when fitted", why)
	apitest.Eventually(t, apitest.JobWait, "similar computed", func() bool {
		r := tn.Get(t, apitest.RRCABase+"/"+id+"/similar", nil)
		return r.Data()["pending"] == false && len(r.Items()) > 0
	})

	run := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/5why/suggest", nil)
	if run.Status != 201 || run.Str("status") != "PENDING" || run.Str("kind") != "FIVE_WHY" {
		t.Fatalf("suggest: %d %s", run.Status, run.Raw)
	}
	done := waitRun(t, tn, apitest.RRCABase+"/"+id+"/5why/suggestions/"+run.Str("id"))
	nodes := done.Data()["nodes"].([]any)
	if len(nodes) == 0 {
		t.Fatalf("no suggestions: %s", done.Raw)
	}
	texts := map[string]bool{}
	for _, n := range nodes {
		node := n.(map[string]any)
		if node["kind"] != "WHY_SUGGESTION" || node["parentId"] != deeper || node["suggestionRunId"] != run.Str("id") {
			t.Errorf("suggestion node %v: want a WHY_SUGGESTION under the deepest WHY %s", node, deeper)
		}
		texts[node["text"].(string)] = true
	}
	if !texts["No torque check of the gland nut at assembly"] && !texts["Seal lip cut during installation"] {
		t.Errorf("suggestions do not draw on the similar analysis: %v", texts)
	}
	// Each suggestion names the node it became, its confidence and its
	// evidence: the similar analysis and its node.
	sugs, _ := done.Data()["suggestions"].([]any)
	if len(sugs) != len(nodes) {
		t.Fatalf("%d suggestions for %d nodes: %s", len(sugs), len(nodes), done.Raw)
	}
	for i, x := range sugs {
		sg := x.(map[string]any)
		ev, _ := sg["evidence"].([]any)
		first := map[string]any{}
		if len(ev) > 0 {
			first = ev[0].(map[string]any)
		}
		nodeID, _ := first["id"].(string)
		if sg["nodeId"] != nodes[i].(map[string]any)["id"] || sg["confidence"].(float64) <= 0 ||
			first["rrcaId"] != old || !strings.HasPrefix(nodeID, "nod_") {
			t.Errorf("suggestion %v: want its node, a confidence and the similar analysis's node as evidence", sg)
		}
	}
	// Accept one (it becomes a WHY), delete another.
	first := nodes[0].(map[string]any)["id"].(string)
	acc := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/nodes/"+first+"/accept", nil)
	if acc.Status != 201 || acc.Str("kind") != "WHY" {
		t.Fatalf("accept: %s", acc.Raw)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/nodes/"+first+"/accept", nil), 409, "CONFLICT")
	if len(nodes) > 1 {
		second := nodes[1].(map[string]any)["id"].(string)
		if r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+second, nil); r.Status != 200 {
			t.Fatalf("delete suggestion: %s", r.Raw)
		}
	}
	apitest.Eventually(t, apitest.JobWait, "rrca.suggestions_ready delivered",
		func() bool { return len(rcv.Requests()) >= 1 })
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.Requests()); n != 1 {
		t.Errorf("%d rrca.suggestions_ready events, want 1", n)
	}
}

func TestLookAcrossSuggestApplyAndReject(t *testing.T) {
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	home := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	same := tn.CreateProject(t, map[string]any{"name": "Line 7"})["id"].(string)
	also := tn.CreateProject(t, map[string]any{"name": "Paint shop"})["id"].(string)
	unrelated := tn.CreateProject(t, map[string]any{"name": "Billing"})["id"].(string)
	sameRisk := tn.CreateRisk(t, map[string]any{"projectId": same,
		"title": "Gland nut torque not checked on hydraulic cylinders", "severity": "HIGH"})["id"].(string)
	tn.CreateTask(t, map[string]any{"projectId": also,
		"title": "Torque check of the gland nut on the paint pump cylinder"})
	tn.CreateTask(t, map[string]any{"projectId": unrelated, "title": "Send the quarterly invoices"})

	id := tn.CreateRRCA(t, map[string]any{"title": "Press cylinder leak",
		"problemStatement": "Oil leak at the press cylinder", "projectId": home})
	root := tn.AddNode(t, id, "ROOT_CAUSE", "No torque check of the gland nut on hydraulic cylinders at assembly", "")
	ca := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/corrective-actions",
		map[string]any{"nodeId": root, "title": "Add a gland nut torque check to the assembly checklist"})
	if ca.Status != 201 {
		t.Fatalf("corrective: %s", ca.Raw)
	}
	run := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/suggest", nil)
	if run.Status != 201 || run.Str("kind") != "LOOK_ACROSS" {
		t.Fatalf("suggest: %s", run.Raw)
	}
	waitRun(t, tn, apitest.RRCABase+"/"+id+"/look-across/runs/"+run.Str("id"))
	list := tn.Get(t, apitest.RRCABase+"/"+id+"/look-across", nil)
	byProject := map[string]map[string]any{}
	for _, it := range list.Items() {
		byProject[it["targetProjectId"].(string)] = it
	}
	if byProject[home] != nil || byProject[unrelated] != nil {
		t.Errorf("suggestions for the home or an unrelated project: %s", list.Raw)
	}
	s1, s2 := byProject[same], byProject[also]
	if s1 == nil || s2 == nil {
		t.Fatalf("missing suggestions for the projects with the same mechanism: %s", list.Raw)
	}
	ev := s1["evidence"].([]any)[0].(map[string]any)
	if ev["id"] != sameRisk || ev["type"] != "risk" || ev["score"].(float64) <= 0 {
		t.Errorf("evidence %v", ev)
	}
	if acts := s1["actions"].([]any); len(acts) != 1 ||
		acts[0] != "Add a gland nut torque check to the assembly checklist" {
		t.Errorf("actions %v", acts)
	}

	applied := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s1["id"].(string)+"/apply",
		map[string]any{"ownerHint": "Line 7 maintenance", "dueDate": "2027-01-15T00:00:00Z"})
	if applied.Status != 201 || applied.Str("suggestion.status") != "APPLIED" {
		t.Fatalf("apply: %d %s", applied.Status, applied.Raw)
	}
	items := applied.Data()["actionItems"].([]any)
	if len(items) != 1 {
		t.Fatalf("apply created %d items", len(items))
	}
	it := items[0].(map[string]any)
	if it["projectId"] != same || it["source"] != "LOOK_ACROSS" || it["sourceRrcaId"] != id ||
		it["sourceSuggestionId"] != s1["id"] ||
		it["ownerHint"] != "Line 7 maintenance" ||
		it["title"] != "Add a gland nut torque check to the assembly checklist" {
		t.Errorf("applied item %v", it)
	}
	if due, _ := it["dueDate"].(string); !strings.HasPrefix(due, "2027-01-15") {
		t.Errorf("applied item due %v, want 2027-01-15", it["dueDate"])
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s1["id"].(string)+"/apply", nil),
		409, "CONFLICT")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s1["id"].(string)+"/reject",
		map[string]any{"reason": "too late"}), 409, "CONFLICT")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/reject",
		map[string]any{"reason": ""}), 400, "VALIDATION_FAILED")
	rej := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/reject",
		map[string]any{"reason": "The paint pump uses a press-fit seal"})
	if rej.Status != 201 || rej.Str("status") != "REJECTED" ||
		rej.Str("reason") != "The paint pump uses a press-fit seal" {
		t.Fatalf("reject: %s", rej.Raw)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/apply", nil),
		409, "CONFLICT")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/reject",
		map[string]any{"reason": "again"}), 409, "CONFLICT")
	other := env.NewTenant(t)
	apitest.WantError(t, other.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/reject",
		map[string]any{"reason": "x"}), 404, "NOT_FOUND")
	apitest.WantError(t, other.Do(t, "POST", apitest.RRCABase+"/"+id+"/look-across/"+s2["id"].(string)+"/apply", nil),
		404, "NOT_FOUND")
	if items := other.Get(t, apitest.RRCABase+"/"+id+"/look-across", nil); items.Status != 404 {
		t.Errorf("another workspace lists the suggestions: %d", items.Status)
	}
}

func TestRRCAFromARisk(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "P"})["id"].(string)
	rsk := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "Weld cracks on brackets",
		"description": "Fatigue tests fail at the weld toe"})["id"].(string)
	r := tn.Do(t, "POST", apitest.RRCABase, map[string]any{"sourceRiskId": rsk})
	if r.Status != 201 || r.Str("title") != "Weld cracks on brackets" || r.Str("sourceRiskId") != rsk ||
		r.Str("projectId") != prj ||
		r.Str("problemStatement") != "Weld cracks on brackets\n\nFatigue tests fail at the weld toe" {
		t.Fatalf("from risk: %d %s", r.Status, r.Raw)
	}
	if ids := tn.Get(t, apitest.RRCABase, map[string]string{"sourceRiskId": rsk}).IDs(); len(ids) != 1 ||
		ids[0] != r.Str("id") {
		t.Errorf("sourceRiskId filter: %v", ids)
	}
	other := env.NewTenant(t)
	apitest.WantError(t, other.Do(t, "POST", apitest.RRCABase, map[string]any{"sourceRiskId": rsk}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Do(t, "POST", apitest.RRCABase, map[string]any{}), 400, "VALIDATION_FAILED")
}

// TestFiveWhyDrawsOnRisksAndTasks: with no similar analysis in the workspace,
// the 5-why run still reaches READY through River and its suggestions come from
// the workspace's own risks and tasks.
func TestFiveWhyDrawsOnRisksAndTasks(t *testing.T) {
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Boiler house"})["id"].(string)
	risk := "Feed water pump suction strainer clogs with scale"
	task := "Replace the clogged suction strainer of the feed water pump"
	tn.CreateRisk(t, map[string]any{"projectId": prj, "title": risk})
	tn.CreateTask(t, map[string]any{"projectId": prj, "title": task})
	tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Order office chairs"})
	id := tn.CreateRRCA(t, map[string]any{"title": "Feed water pump cavitation",
		"problemStatement": "The feed water pump cavitates: suction strainer clogged", "projectId": prj})
	tn.AddNode(t, id, "WHY", "Suction pressure drops at the feed water pump", "")
	run := tn.Do(t, "POST", apitest.RRCABase+"/"+id+"/5why/suggest", nil)
	if run.Status != 201 {
		t.Fatalf("suggest: %d %s", run.Status, run.Raw)
	}
	done := waitRun(t, tn, apitest.RRCABase+"/"+id+"/5why/suggestions/"+run.Str("id"))
	texts := map[string]bool{}
	for _, n := range done.Data()["nodes"].([]any) {
		texts[n.(map[string]any)["text"].(string)] = true
	}
	if !texts[risk] && !texts[task] {
		t.Errorf("suggestions %v do not draw on the workspace's risk or task", texts)
	}
	if texts["Order office chairs"] {
		t.Errorf("an unrelated task was suggested: %v", texts)
	}
}
