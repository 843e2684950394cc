package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// walk reads a list one item a page, following nextCursor, and returns the
// ids in the order served; every page but the last names a next one.
func walk(t *testing.T, get func(query string) *apitest.Response, idField string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for page := 0; ; page++ {
		q := "limit=1"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r := get(q)
		if r.Status != 200 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Raw)
		}
		next, present := r.Data()["nextCursor"]
		if !present {
			t.Fatalf("page %d has no nextCursor member: %s", page, r.Raw)
		}
		for _, it := range r.Items() {
			ids = append(ids, fmt.Sprint(it[idField]))
		}
		if next == nil {
			return ids
		}
		if len(r.Items()) != 1 || page > 20 {
			t.Fatalf("page %d: %d items with a next cursor: %s", page, len(r.Items()), r.Raw)
		}
		cursor = next.(string)
	}
}

func wantAll(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	if len(got) != len(want) || len(seen) != len(want) {
		t.Fatalf("%s: paged %v, want each of %v once", what, got, want)
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("%s: paged %v, missing %s", what, got, id)
		}
	}
}

// TestChildListsPage: the members, webhook, node, corrective-action and
// look-across lists answer nextCursor (DESIGN.md section 5) and page by
// limit and cursor through every item once; another list's cursor is 400.
func TestChildListsPage(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	users := []string{tn.UserID}
	for i := range 2 {
		u := env.Do(
			t,
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/users", Header: env.Admin(),
				Body: map[string]any{"email": fmt.Sprintf("m%d@%s.example.com", i, tn.WorkspaceID[:8]), "name": "Member"}},
		)
		users = append(users, u.Str("id"))
	}
	prj := tn.CreateProject(t, map[string]any{"name": "paged", "memberIds": users})["id"].(string)
	wantAll(t, "members", walk(t, func(q string) *apitest.Response {
		return tn.Do(t, "GET", apitest.ProjectBase+"members?projectId="+prj+"&"+q, nil)
	}, "userId"), users...)

	var hooks []string
	for i := range 3 {
		hooks = append(hooks, tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks",
			map[string]any{"url": fmt.Sprintf("https://93.184.216.34/hook%d", i), "events": []string{"task.created"}}).Str("id"))
	}
	wantAll(t, "webhooks", walk(t, func(q string) *apitest.Response {
		return tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks?"+q, nil)
	}, "id"), hooks...)

	id := tn.CreateRRCA(t, map[string]any{"title": "Leak", "problemStatement": "Oil", "projectId": prj})
	problem := tn.AddNode(t, id, "PROBLEM", "Oil", "")
	why := tn.AddNode(t, id, "WHY", "Seal", problem)
	root := tn.AddNode(t, id, "ROOT_CAUSE", "Torque", why)
	wantAll(
		t,
		"nodes",
		walk(t, func(q string) *apitest.Response { return tn.Do(t, "GET", apitest.RRCABase+"/"+id+"/nodes?"+q, nil) }, "id"),
		problem,
		why,
		root,
	)
	wantAll(t, "WHY nodes", walk(t, func(q string) *apitest.Response {
		return tn.Do(t, "GET", apitest.RRCABase+"/"+id+"/nodes?kind=WHY&"+q, nil)
	}, "id"), why)

	var cas []string
	for i := range 3 {
		r := tn.Do(
			t,
			"POST",
			apitest.RRCABase+"/"+id+"/corrective-actions",
			map[string]any{"nodeId": root, "title": fmt.Sprintf("fix %d", i)},
		)
		cas = append(cas, r.Str("correctiveAction.id"))
	}
	wantAll(t, "corrective actions", walk(t, func(q string) *apitest.Response {
		return tn.Do(t, "GET", apitest.RRCABase+"/"+id+"/corrective-actions?"+q, nil)
	}, "id"), cas...)

	// No worker runs here: the look-across list is empty, and still a page.
	wantAll(t, "look-across", walk(t, func(q string) *apitest.Response {
		return tn.Do(t, "GET", apitest.RRCABase+"/"+id+"/look-across?"+q, nil)
	}, "id"))

	nodesCursor := tn.Do(t, "GET", apitest.RRCABase+"/"+id+"/nodes?limit=1", nil).Data()["nextCursor"].(string)
	for _, path := range []string{
		apitest.RRCABase + "/" + id + "/corrective-actions?cursor=" + nodesCursor,
		apitest.ProjectBase + "members?projectId=" + prj + "&cursor=" + nodesCursor,
		apitest.RRCABase + "/" + id + "/nodes?limit=0",
		apitest.RRCABase + "/" + id + "/look-across?limit=201",
	} {
		if r := tn.Do(t, "GET", path, nil); r.Status != 400 || !strings.Contains(string(r.Raw), "VALIDATION_FAILED") {
			t.Errorf("%s: %d %s", path, r.Status, r.Raw)
		}
	}
	if r := tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks?cursor="+nodesCursor, nil); r.Status != 400 {
		t.Errorf("webhooks with a nodes cursor: %d %s", r.Status, r.Raw)
	}

	// Another workspace pages none of these lists: 404, and nothing of them.
	other := env.NewTenant(t)
	for _, path := range []string{
		apitest.ProjectBase + "members?projectId=" + prj + "&limit=1",
		apitest.RRCABase + "/" + id + "/nodes?limit=1",
		apitest.RRCABase + "/" + id + "/corrective-actions?limit=1",
		apitest.RRCABase + "/" + id + "/look-across?limit=1",
	} {
		r := other.Do(t, "GET", path, nil)
		apitest.WantError(t, r, 404, "NOT_FOUND")
		for _, leak := range append([]string{why, root, cas[0]}, users[1:]...) {
			if strings.Contains(string(r.Raw), leak) {
				t.Errorf("%s answered another workspace with %s: %s", path, leak, r.Raw)
			}
		}
	}
	r := other.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks?limit=1", nil)
	if r.Status != 404 || strings.Contains(string(r.Raw), hooks[0]) {
		t.Errorf("another workspace's console paged this app's webhooks: %d %s", r.Status, r.Raw)
	}
}
