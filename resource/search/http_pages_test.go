package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestSearchRanksWordsAbovePrefixesAboveTrigrams: q=seal over tasks and risks
// once found "Supplier delay on torque sensors" by trigram
// similarity with the snippet "late". A whole-word match comes first, a word
// that starts with the query next, and the sensors risk not at all.
func TestSearchRanksWordsAbovePrefixesAboveTrigrams(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	sealant := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Sealant delivery"})["id"].(string)
	seal := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "Replace the pump",
		"description": "The shaft seal weeps"})["id"].(string)
	sensors := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "Supplier delay on torque sensors",
		"description": "Parts arrive late", "severity": "HIGH"})["id"].(string)
	r := tn.Get(t, apitest.SearchPath, map[string]string{"q": "seal", "types": "task,risk"})
	if ids := r.IDs(); !slices.Equal(ids, []string{seal, sealant}) {
		t.Fatalf("q=seal: %v, want the seal task, the sealant task (and not the sensors risk %s): %s",
			ids, sensors, r.Raw)
	}
	items := r.Items()
	if !strings.Contains(items[0]["snippet"].(string), "«seal» weeps") {
		t.Errorf("snippet %q", items[0]["snippet"])
	}
	if items[0]["score"].(float64) <= items[1]["score"].(float64) {
		t.Errorf("scores %v, %v", items[0]["score"], items[1]["score"])
	}
	if r.Data()["nextCursor"] != nil {
		t.Errorf("one page has a next cursor: %v", r.Data()["nextCursor"])
	}
}

// TestSearchPagesWithNextCursor walks every page of a search: each hit once,
// in score order, the last page without a cursor; a cursor that is not one of
// search's is 400.
func TestSearchPagesWithNextCursor(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	var want []string
	for _, title := range []string{"Gizmo", "Gizmo gizmo", "Calibrate the gizmo", "Gizmo spare parts", "Gizmo manual",
		"Gizmos"} {
		want = append(want, tn.CreateTask(t, map[string]any{"projectId": prj, "title": title})["id"].(string))
	}
	var got []string
	var scores []float64
	cursor := ""
	for page := 0; ; page++ {
		q := map[string]string{"q": "gizmo", "types": "task", "limit": "4"}
		if cursor != "" {
			q["cursor"] = cursor
		}
		r := tn.Get(t, apitest.SearchPath, q)
		if r.Status != 200 || page > 5 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Raw)
		}
		for _, it := range r.Items() {
			got = append(got, it["id"].(string))
			scores = append(scores, it["score"].(float64))
		}
		next, _ := r.Data()["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	slices.Sort(want)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatalf("pages gave %v, want each of %v once", got, want)
	}
	if !slices.IsSortedFunc(scores, func(a, b float64) int { return -cmpFloat(a, b) }) {
		t.Errorf("scores across pages are not descending: %v", scores)
	}
	list := tn.Get(t, apitest.TaskBase+"list", map[string]string{"limit": "1"})
	for _, bad := range []string{"nonsense", list.Data()["nextCursor"].(string)} {
		apitest.WantError(t, tn.Get(t, apitest.SearchPath, map[string]string{"q": "gizmo", "cursor": bad}),
			400, "VALIDATION_FAILED")
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSearchFilters narrows by project, status and time of the last change;
// another workspace's key with the same filters finds nothing.
func TestSearchFilters(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	p1 := a.CreateProject(t, map[string]any{"name": "Line one"})["id"].(string)
	p2 := a.CreateProject(t, map[string]any{"name": "Line two"})["id"].(string)
	t1 := a.CreateTask(t, map[string]any{"projectId": p1, "title": "Oil the conveyor"})["id"].(string)
	t2 := a.CreateTask(t, map[string]any{"projectId": p2, "title": "Conveyor belt tension"})["id"].(string)
	r1 := a.CreateRisk(t, map[string]any{"projectId": p1, "title": "Conveyor jams", "severity": "LOW"})["id"].(string)
	n1 := a.Created(t, apitest.NoteBase+"create", map[string]any{"projectId": p1,
		"body": "Conveyor noise on Mondays"})["id"].(string)
	up := a.Do(t, "POST", apitest.TaskBase+"update", map[string]any{"taskId": t2, "status": "IN_PROGRESS"})
	if up.Status != 201 {
		t.Fatalf("update: %d %s", up.Status, up.Raw)
	}
	search := func(tn *apitest.Tenant, q map[string]string) []string {
		t.Helper()
		q["q"] = "conveyor"
		ids := searchIDs(t, tn, q)
		slices.Sort(ids)
		return ids
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	cases := []struct {
		name string
		q    map[string]string
		want []string
	}{
		{"none", map[string]string{}, sorted(t1, t2, r1, n1)},
		{"projectId", map[string]string{"projectId": p1}, sorted(t1, r1, n1)},
		{"status of a task", map[string]string{"status": "IN_PROGRESS"}, sorted(t2)},
		{"status of tasks and risks", map[string]string{"status": "OPEN"}, sorted(r1)},
		{"status with a project", map[string]string{"status": "TODO", "projectId": p1}, sorted(t1)},
		{"updatedSince", map[string]string{"updatedSince": up.Str("updatedAt")}, sorted(t2)},
	}
	for _, tc := range cases {
		if got := search(a, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if got := search(b, tc.q); len(got) != 0 {
			t.Errorf("%s: another workspace finds %v", tc.name, got)
		}
	}
	apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": "conveyor", "status": "ARCHIVED"}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, a.Get(t, apitest.SearchPath,
		map[string]string{"q": "conveyor", "status": "TODO", "types": "note"}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": "conveyor", "projectId": "tsk_nope"}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, a.Get(t, apitest.SearchPath, map[string]string{"q": "conveyor", "updatedSince": "yesterday"}),
		400, "VALIDATION_FAILED")
}
