package search_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func searchIDs(t *testing.T, tn *apitest.Tenant, q map[string]string) []string {
	t.Helper()
	r := tn.Get(t, apitest.SearchPath, q)
	if r.Status != 200 {
		t.Fatalf("search %v: %d %s", q, r.Status, r.Raw)
	}
	return r.IDs()
}

func TestSearchFindsByWordsPartsAndTypos(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	furnace := tn.CreateProject(t, map[string]any{"name": "Furnace retrofit",
		"description": "Replace the failing burners on line four"})["id"].(string)
	press := tn.CreateProject(t, map[string]any{"name": "Hydraulic press upgrade"})["id"].(string)
	archived := tn.CreateProject(t, map[string]any{"name": "Furnace archive"})["id"].(string)
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": archived})

	cases := []struct {
		name, q string
		first   string
		absent  []string
	}{
		{"whole word", "press", press, []string{furnace}},
		{"stemmed word in the description", "failures burner", furnace, []string{press}},
		{"partial word", "retrofi", furnace, []string{press}},
		{"typo", "hydralic", press, []string{furnace}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tn.Get(t, apitest.SearchPath, map[string]string{"q": tc.q})
			ids := r.IDs()
			if len(ids) == 0 || ids[0] != tc.first {
				t.Fatalf("q=%q: %v, want %s first", tc.q, ids, tc.first)
			}
			for _, a := range tc.absent {
				if slices.Contains(ids, a) {
					t.Errorf("q=%q also returned %s", tc.q, a)
				}
			}
			top := r.Items()[0]
			if top["type"] != "project" || top["projectId"] != tc.first || top["score"].(float64) <= 0 ||
				top["title"] == "" || top["snippet"] == "" {
				t.Errorf("item shape: %v", top)
			}
		})
	}
	if ids := searchIDs(t, tn, map[string]string{"q": "furnace"}); slices.Contains(ids, archived) {
		t.Error("archived project found")
	}
	if ids := searchIDs(t, tn, map[string]string{"q": "furnace", "limit": "1"}); len(ids) != 1 {
		t.Errorf("limit=1 gave %d items", len(ids))
	}
}

func TestSearchIsolationScopesAndInput(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	a.CreateProject(t, map[string]any{"name": "Zeppelin hangar"})
	if ids := searchIDs(t, b, map[string]string{"q": "zeppelin"}); len(ids) != 0 {
		t.Fatalf("B finds A's project: %v", ids)
	}
	noProjects := a.WithKey(a.NewKey(t, "tasks:read"))
	apitest.WantError(t, noProjects.Get(t, apitest.SearchPath, map[string]string{"q": "zeppelin", "types": "project"}),
		403, "INSUFFICIENT_SCOPE")
	nothing := a.WithKey(a.NewKey(t))
	apitest.WantError(t, nothing.Get(t, apitest.SearchPath, map[string]string{"q": "zeppelin"}),
		403, "INSUFFICIENT_SCOPE")
	apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": "x", "types": "project,spaceship"}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": " "}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, a.Get(t, apitest.SearchPath, nil), 400, "VALIDATION_FAILED")
	// Operators and punctuation are text, never SQL or tsquery syntax errors.
	for _, q := range []string{`'); drop table projects; --`, `a & | ! ( :*`, `"unterminated`, `%_\`} {
		if r := a.Get(t, apitest.SearchPath, map[string]string{"q": q}); r.Status != 200 {
			t.Errorf("q=%q: %d %s", q, r.Status, r.Raw)
		}
	}
}

func TestSearchSpansTypesAndHonoursScopes(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Gearbox overhaul"})["id"].(string)
	tsk := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Replace gearbox bearings",
		"description": "Bearings whine at speed"})["id"].(string)
	r := tn.Get(t, apitest.SearchPath, map[string]string{"q": "gearbox"})
	types := map[string]string{}
	for _, it := range r.Items() {
		types[it["id"].(string)] = it["type"].(string)
		if it["projectId"] != prj {
			t.Errorf("item %v has projectId %v", it["id"], it["projectId"])
		}
	}
	if types[prj] != "project" || types[tsk] != "task" {
		t.Fatalf("search across types: %s", r.Raw)
	}
	if ids := searchIDs(t, tn, map[string]string{"q": "gearbox", "types": "task"}); !slices.Equal(ids, []string{tsk}) {
		t.Errorf("types=task: %v", ids)
	}
	projectsOnly := tn.WithKey(tn.NewKey(t, "projects:read"))
	for _, it := range projectsOnly.Get(t, apitest.SearchPath, map[string]string{"q": "gearbox"}).Items() {
		if it["type"] != "project" {
			t.Errorf("a projects:read key found a %v", it["type"])
		}
	}
	apitest.WantError(t, projectsOnly.Get(t, apitest.SearchPath,
		map[string]string{"q": "gearbox", "types": "project,task"}), 403, "INSUFFICIENT_SCOPE")
}

// TestSearchCoversEveryTypeAndItsScope plants one item of each searchable type
// with the same rare word: all six come back with their type; a key with one
// read scope finds only that type; another workspace finds none; a limit
// outside 1..200 is refused.
func TestSearchCoversEveryTypeAndItsScope(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	created := func(r *apitest.Response) string {
		t.Helper()
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Raw)
		}
		return r.Str("id")
	}
	prj := a.CreateProject(t, map[string]any{"name": "Quokka enclosure"})["id"].(string)
	want := map[string]string{ // id -> type
		prj: "project",
		a.CreateTask(t, map[string]any{"projectId": prj,
			"title": "Feed the quokka"})["id"].(string): "task",
		a.CreateRisk(t, map[string]any{"projectId": prj,
			"title": "Quokka escapes the enclosure"})["id"].(string): "risk",
		created(a.Do(t, "POST", apitest.NoteBase+"create",
			map[string]any{"projectId": prj, "body": "The quokka likes shade"})): "note",
		created(a.Do(t, "POST", apitest.ActionItemBase+"create",
			map[string]any{"projectId": prj, "title": "Build quokka shade"})): "action-item",
		created(a.Do(t, "POST", apitest.RRCABase, map[string]any{"projectId": prj,
			"title": "Quokka fence gap"})): "rrca",
	}
	got := map[string]string{}
	for _, it := range a.Get(t, apitest.SearchPath, map[string]string{"q": "quokka", "limit": "200"}).Items() {
		got[it["id"].(string)] = it["type"].(string)
	}
	for id, typ := range want {
		if got[id] != typ {
			t.Errorf("%s %s: found as %q", typ, id, got[id])
		}
	}
	scopeOf := map[string]string{"project": "projects:read", "task": "tasks:read", "risk": "risks:read",
		"note":        "notes:read",
		"action-item": "action-items:read", "rrca": "rrca:read"}
	for typ, scope := range scopeOf {
		items := a.WithKey(a.NewKey(t, scope)).Get(t, apitest.SearchPath, map[string]string{"q": "quokka"}).Items()
		if len(items) == 0 {
			t.Errorf("a %s key finds nothing", scope)
		}
		for _, it := range items {
			if it["type"] != typ {
				t.Errorf("a %s key found a %v", scope, it["type"])
			}
		}
	}
	if ids := searchIDs(t, b, map[string]string{"q": "quokka"}); len(ids) != 0 {
		t.Errorf("another workspace finds A's items: %v", ids)
	}
	for _, limit := range []string{"0", "201", "ten"} {
		apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": "quokka", "limit": limit}),
			400, "VALIDATION_FAILED")
	}
}
