package risk_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestRiskTransitionsOnPOSTAndPATCH(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "R"})["id"].(string)
	all := []string{"OPEN", "MITIGATING", "RESOLVED"}
	allowed := map[string][]string{"OPEN": {"MITIGATING", "RESOLVED"}, "MITIGATING": {"RESOLVED", "OPEN"},
		"RESOLVED": {"OPEN"}}
	reach := map[string][]string{"OPEN": nil, "MITIGATING": {"MITIGATING"}, "RESOLVED": {"RESOLVED"}}
	for _, method := range []string{"POST", "PATCH"} {
		for _, from := range all {
			for _, to := range all {
				t.Run(method+" "+from+"->"+to, func(t *testing.T) {
					id := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": from + to})["id"].(string)
					for _, step := range reach[from] {
						if r := tn.Do(t, method, apitest.RiskBase+"update",
							map[string]any{"riskId": id, "status": step}); r.Status != 201 {
							t.Fatalf("reaching %s: %s", from, r.Raw)
						}
					}
					before := len(tn.Events(t))
					r := tn.Do(t, method, apitest.RiskBase+"update", map[string]any{"riskId": id, "status": to})
					if !slices.Contains(allowed[from], to) {
						apitest.WantError(t, r, 400, "INVALID_TRANSITION")
						d := r.Body["error"].(map[string]any)["details"].(map[string]any)
						if d["from"] != from || d["to"] != to || len(d["allowed"].([]any)) != len(allowed[from]) {
							t.Errorf("details %v", d)
						}
						if after := len(tn.Events(t)); after != before {
							t.Errorf("a refused move wrote %d events", after-before)
						}
						return
					}
					if r.Status != 201 || r.Str("status") != to {
						t.Fatalf("allowed move: %d %s", r.Status, r.Raw)
					}
					evs := tn.Events(t)[before:]
					var types []string
					for _, e := range evs {
						types = append(types, e.Type)
						if e.Jobs != 1 {
							t.Errorf("%s has %d fan-out jobs", e.Type, e.Jobs)
						}
					}
					want := []string{"risk.status_changed"}
					switch to {
					case "OPEN":
						want = append(want, "risk.opened")
					case "RESOLVED":
						want = append(want, "risk.resolved")
					}
					want = append(want, "risk.updated")
					if !slices.Equal(types, want) {
						t.Errorf("events %v, want %v", types, want)
					}
					if evs[0].Data["from"] != from || evs[0].Data["to"] != to || evs[0].Data["riskId"] != id {
						t.Errorf("status event data %v", evs[0].Data)
					}
				})
			}
		}
	}
}

func TestRiskCreateUpdateAndValidation(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "R"})["id"].(string)
	r := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "Supplier delay", "severity": "HIGH",
		"ownerId": tn.UserID, "description": "late steel"})
	if r["status"] != "OPEN" || r["severity"] != "HIGH" || r["ownerId"] != tn.UserID {
		t.Fatalf("created %v", r)
	}
	if d := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "default"}); d["severity"] != "MEDIUM" {
		t.Errorf("default severity %v", d["severity"])
	}
	up := tn.Do(t, "PATCH", apitest.RiskBase+"update",
		map[string]any{"riskId": r["id"], "ownerId": nil, "description": nil, "severity": "LOW"})
	if up.Status != 201 || up.Data()["ownerId"] != nil || up.Data()["description"] != nil ||
		up.Str("severity") != "LOW" || up.Str("title") != "Supplier delay" {
		t.Fatalf("update %s", up.Raw)
	}
	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"create", map[string]any{"title": "x"}, "projectId"},
		{"create", map[string]any{"projectId": prj, "title": ""}, "title"},
		{"create", map[string]any{"projectId": prj, "title": "x", "severity": "EXTREME"}, "severity"},
		{"create", map[string]any{"projectId": prj, "title": "x", "ownerId": "00000000-0000-0000-0000-000000000001"},
			"ownerId"},
		{"update", map[string]any{"riskId": r["id"], "status": "CLOSED"}, "status"},
		{"update", map[string]any{"riskId": r["id"], "severity": nil}, "severity"},
		{"update", map[string]any{"status": "OPEN"}, "riskId"},
	} {
		got := tn.Do(t, "POST", apitest.RiskBase+tc.path, tc.body)
		apitest.WantError(t, got, 400, "VALIDATION_FAILED")
		if f := got.Body["error"].(map[string]any)["details"].(map[string]any)["field"]; f != tc.field {
			t.Errorf("%v: field %v, want %s", tc.body, f, tc.field)
		}
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.RiskBase+"create",
		map[string]any{"projectId": "prj_00000000000000000000000000", "title": "x"}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.RiskBase+"detail", map[string]string{"id": "rsk_nope"}), 404, "NOT_FOUND")
	if got := tn.Get(t, apitest.RiskBase+"detail",
		map[string]string{"id": r["id"].(string)}); got.Str("severity") != "LOW" {
		t.Errorf("detail %s", got.Raw)
	}
}

func TestRiskListFilters(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	p1 := tn.CreateProject(t, map[string]any{"name": "one"})["id"].(string)
	p2 := tn.CreateProject(t, map[string]any{"name": "two"})["id"].(string)
	a := tn.CreateRisk(t, map[string]any{"projectId": p1, "title": "Steel price spike", "severity": "HIGH",
		"ownerId": tn.UserID})["id"].(string)
	cut := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	b := tn.CreateRisk(t, map[string]any{"projectId": p2, "title": "Crane availability",
		"description": "steel erection crane booked"})["id"].(string)
	c := tn.CreateRisk(t, map[string]any{"projectId": p2, "title": "Permit delay",
		"severity": "CRITICAL"})["id"].(string)
	tn.Do(t, "POST", apitest.RiskBase+"update", map[string]any{"riskId": c, "status": "MITIGATING"})
	arch := tn.CreateRisk(t, map[string]any{"projectId": p1, "title": "Old steel risk"})["id"].(string)
	tn.Do(t, "POST", apitest.RiskBase+"archive", map[string]any{"riskId": arch})
	cases := []struct {
		q    map[string]string
		want []string
	}{
		{map[string]string{}, []string{c, b, a}},
		{map[string]string{"projectId": p2}, []string{c, b}},
		{map[string]string{"status": "MITIGATING"}, []string{c}},
		{map[string]string{"severity": "HIGH"}, []string{a}},
		{map[string]string{"ownerId": tn.UserID}, []string{a}},
		{map[string]string{"q": "STEEL"}, []string{b, a}},
		{map[string]string{"createdAfter": cut}, []string{c, b}},
		{map[string]string{"createdBefore": cut}, []string{a}},
		{map[string]string{"includeArchived": "true", "projectId": p1}, []string{arch, a}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.q), func(t *testing.T) {
			if got := tn.Get(t, apitest.RiskBase+"list", tc.q).IDs(); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []map[string]string{{"status": "CLOSED"}, {"severity": "x"}, {"projectId": "p"},
		{"ownerId": "o"}, {"createdAfter": "then"}, {"limit": "0"}} {
		apitest.WantError(t, tn.Get(t, apitest.RiskBase+"list", bad), 400, "VALIDATION_FAILED")
	}
	// Keyset pages while rows arrive.
	apitest.PagesWhileRowsArrive(t, tn, apitest.RiskBase+"list", map[string]string{"limit": "1"}, []string{a, b, c},
		func(page int) {
			tn.CreateRisk(t, map[string]any{"projectId": p1, "title": fmt.Sprintf("late %d", page)})
		})
}

func TestRisksIsolationScopesAndCascade(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	prj := a.CreateProject(t, map[string]any{"name": "a"})["id"].(string)
	id := a.CreateRisk(t, map[string]any{"projectId": prj, "title": "secret"})["id"].(string)
	bp := b.CreateProject(t, map[string]any{"name": "b"})["id"].(string)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.RiskBase + "detail?id=" + id, nil},
		{"POST", apitest.RiskBase + "update", map[string]any{"riskId": id, "status": "RESOLVED"}},
		{"PATCH", apitest.RiskBase + "update", map[string]any{"riskId": id, "title": "mine"}},
		{"POST", apitest.RiskBase + "archive", map[string]any{"riskId": id}},
		{"POST", apitest.RiskBase + "restore", map[string]any{"riskId": id}},
		{"POST", apitest.RiskBase + "create", map[string]any{"projectId": prj, "title": "into A"}},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	for _, q := range []map[string]string{
		{"includeArchived": "true"}, {"projectId": prj}, {"q": "secret"}, {"status": "OPEN"}, {"ownerId": a.UserID},
	} {
		if ids := b.Get(t, apitest.RiskBase+"list", q).IDs(); len(ids) != 0 {
			t.Errorf("B lists A's risks with %v: %v", q, ids)
		}
	}
	if ids := b.Get(t, apitest.RiskBase+"list", map[string]string{"projectId": bp}).IDs(); len(ids) != 0 {
		t.Errorf("B's own project lists A's risks: %v", ids)
	}
	ro := a.WithKey(a.NewKey(t, "risks:read"))
	r := ro.Do(t, "POST", apitest.RiskBase+"create", map[string]any{"projectId": prj, "title": "x"})
	apitest.WantError(t, r, 403, "INSUFFICIENT_SCOPE")
	if r.Body["error"].(map[string]any)["details"].(map[string]any)["scope"] != "risks:write" {
		t.Errorf("scope detail %s", r.Raw)
	}
	apitest.WantError(t, a.WithKey(a.NewKey(t, "tasks:read")).Get(t, apitest.RiskBase+"list", nil),
		403, "INSUFFICIENT_SCOPE")

	note := a.Do(t, "POST", apitest.NoteBase+"create",
		map[string]any{"projectId": prj, "body": "kickoff notes"}).Str("id")
	a.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	del := a.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": prj})
	if del.Status != 201 {
		t.Fatalf("delete project: %s", del.Raw)
	}
	rd, nd := a.EventsOf(t, "risk.deleted"), a.EventsOf(t, "note.deleted")
	if len(rd) != 1 || rd[0].Data["riskId"] != id || len(nd) != 1 || nd[0].Data["noteId"] != note {
		t.Errorf("cascade events: %v %v", rd, nd)
	}
	apitest.WantError(t, a.Get(t, apitest.RiskBase+"detail", map[string]string{"id": id}), 404, "NOT_FOUND")
}
