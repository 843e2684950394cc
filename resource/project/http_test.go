package project_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestProjectLifecycle(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	p := tn.CreateProject(t, map[string]any{"name": "Retrofit", "description": "line 4", "ownerId": tn.UserID,
		"ragStatus": "AMBER", "startDate": "2026-01-05", "targetDate": "2026-06-30", "memberIds": []string{tn.UserID}})
	id := p["id"].(string)
	if p["ragStatus"] != "AMBER" || p["startDate"] != "2026-01-05" || len(p["members"].([]any)) != 1 ||
		p["ownerId"] != tn.UserID {
		t.Fatalf("created: %v", p)
	}

	detail := tn.Get(t, apitest.ProjectBase+"detail", map[string]string{"id": id})
	if detail.Status != 200 || detail.Str("name") != "Retrofit" {
		t.Fatalf("detail: %d %s", detail.Status, detail.Raw)
	}
	up := tn.Do(t, "POST", apitest.ProjectBase+"update",
		map[string]any{"id": id, "ragStatus": "RED", "description": nil, "targetDate": "2026-07-31"})
	if up.Status != 201 || up.Str("ragStatus") != "RED" || up.Data()["description"] != nil ||
		up.Str("targetDate") != "2026-07-31" || up.Str("name") != "Retrofit" {
		t.Fatalf("update: %d %s", up.Status, up.Raw)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": id}), 409, "CONFLICT")
	arch := tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": id})
	if arch.Status != 201 || arch.Data()["archivedAt"] == nil {
		t.Fatalf("archive: %s", arch.Raw)
	}
	if ids := tn.Get(t, apitest.ProjectBase+"list", nil).IDs(); slices.Contains(ids, id) {
		t.Error("an archived project is listed without includeArchived")
	}
	if ids := tn.Get(t, apitest.ProjectBase+"list",
		map[string]string{"includeArchived": "true"}).IDs(); !slices.Contains(ids, id) {
		t.Error("includeArchived=true does not list the archived project")
	}
	rest := tn.Do(t, "POST", apitest.ProjectBase+"restore", map[string]any{"id": id})
	if rest.Status != 201 || rest.Data()["archivedAt"] != nil {
		t.Fatalf("restore: %s", rest.Raw)
	}
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": id})
	del := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": id})
	if del.Status != 201 || del.Data()["deleted"] != true ||
		del.Data()["cascaded"].(map[string]any)["members"] != float64(1) {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	apitest.WantError(t, tn.Get(t, apitest.ProjectBase+"detail", map[string]string{"id": id}), 404, "NOT_FOUND")

	var types []string
	for _, e := range tn.Events(t) {
		if e.Jobs != 1 {
			t.Errorf("event %s has %d fan-out jobs, want 1", e.Type, e.Jobs)
		}
		types = append(types, e.Type)
	}
	want := []string{"project.created", "project.member_added", "project.updated", "project.archived",
		"project.restored", "project.archived", "project.deleted"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
}

func TestProjectValidation(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	p := tn.CreateProject(t, map[string]any{"name": "ok"})
	cases := []struct {
		name  string
		path  string
		body  any
		field string
	}{
		{"empty name", "create", map[string]any{"name": " "}, "name"},
		{"bad rag", "create", map[string]any{"name": "x", "ragStatus": "PURPLE"}, "ragStatus"},
		{"bad date", "create", map[string]any{"name": "x", "startDate": "2026-02-30"}, "startDate"},
		{"target before start", "create", map[string]any{"name": "x", "startDate": "2026-03-01",
			"targetDate": "2026-02-01"}, "targetDate"},
		{"owner not a user", "create", map[string]any{"name": "x", "ownerId": "00000000-0000-0000-0000-000000000001"},
			"ownerId"},
		{"owner not a uuid", "create", map[string]any{"name": "x", "ownerId": "bob"}, "ownerId"},
		{"member not a user", "create", map[string]any{"name": "x",
			"memberIds": []string{"00000000-0000-0000-0000-000000000001"}}, "memberIds"},
		{"name wrong type", "create", map[string]any{"name": 5}, "name"},
		{"unknown field", "create", map[string]any{"name": "x", "color": "red"}, "color"},
		{"null rag on update", "update", map[string]any{"id": p["id"], "ragStatus": nil}, "ragStatus"},
		{"bad member role", "member/add", map[string]any{"projectId": p["id"], "userId": tn.UserID, "role": "KING"},
			"role"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tn.Do(t, "POST", apitest.ProjectBase+tc.path, tc.body)
			apitest.WantError(t, r, 400, "VALIDATION_FAILED")
			if got := r.Body["error"].(map[string]any)["details"].(map[string]any)["field"]; got != tc.field {
				t.Errorf("details.field = %v, want %s", got, tc.field)
			}
		})
	}
	for _, q := range []map[string]string{{"ragStatus": "BLUE"}, {"ownerId": "x"}, {"includeArchived": "maybe"},
		{"limit": "201"}, {"cursor": "zzz"}} {
		apitest.WantError(t, tn.Get(t, apitest.ProjectBase+"list", q), 400, "VALIDATION_FAILED")
	}
	apitest.WantError(t, tn.Get(t, apitest.ProjectBase+"detail", map[string]string{"id": "prj_nope"}),
		404, "NOT_FOUND")
	if n := len(tn.EventsOf(t, "project.created")); n != 1 {
		t.Errorf("%d project.created events; refused creates must write none", n)
	}
}

func TestProjectListFilters(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	red := tn.CreateProject(t, map[string]any{"name": "Alpha furnace", "ragStatus": "RED",
		"ownerId": tn.UserID})["id"].(string)
	green := tn.CreateProject(t, map[string]any{"name": "Beta press"})["id"].(string)
	archived := tn.CreateProject(t, map[string]any{"name": "Gamma 100% done_"})["id"].(string)
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": archived})

	cases := []struct {
		query map[string]string
		want  []string
	}{
		{map[string]string{}, []string{green, red}},
		{map[string]string{"ragStatus": "RED"}, []string{red}},
		{map[string]string{"ragStatus": "GREEN"}, []string{green}},
		{map[string]string{"ownerId": tn.UserID}, []string{red}},
		{map[string]string{"q": "FURN"}, []string{red}},
		{map[string]string{"q": "100%", "includeArchived": "true"}, []string{archived}},
		{map[string]string{"q": "e_", "includeArchived": "true"}, []string{archived}},
		{map[string]string{"includeArchived": "true"}, []string{archived, green, red}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.query), func(t *testing.T) {
			r := tn.Get(t, apitest.ProjectBase+"list", tc.query)
			if got := r.IDs(); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProjectPagesSkipNothingWhileRowsArrive(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	var created []string
	for i := 0; i < 5; i++ {
		created = append(created, tn.CreateProject(t, map[string]any{"name": fmt.Sprintf("p%d", i)})["id"].(string))
	}
	apitest.PagesWhileRowsArrive(t, tn, apitest.ProjectBase+"list", map[string]string{"limit": "2"}, created,
		func(page int) {
			tn.CreateProject(t, map[string]any{"name": fmt.Sprintf("late%d", page)})
		})
}

func TestProjectsAreIsolatedBetweenWorkspaces(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	id := a.CreateProject(t, map[string]any{"name": "secret plans"})["id"].(string)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.ProjectBase + "detail?id=" + id, nil},
		{"GET", apitest.ProjectBase + "members?projectId=" + id, nil},
		{"POST", apitest.ProjectBase + "update", map[string]any{"id": id, "name": "mine"}},
		{"POST", apitest.ProjectBase + "archive", map[string]any{"id": id}},
		{"POST", apitest.ProjectBase + "restore", map[string]any{"id": id}},
		{"POST", apitest.ProjectBase + "delete", map[string]any{"id": id}},
		{"POST", apitest.ProjectBase + "member/add", map[string]any{"projectId": id, "userId": b.UserID}},
		{"POST", apitest.ProjectBase + "member/remove", map[string]any{"projectId": id, "userId": a.UserID}},
	} {
		r := b.Do(t, tc.method, tc.path, tc.body)
		apitest.WantError(t, r, 404, "NOT_FOUND")
	}
	if ids := b.Get(t, apitest.ProjectBase+"list",
		map[string]string{"includeArchived": "true", "q": "secret"}).IDs(); len(ids) != 0 {
		t.Errorf("B lists A's projects: %v", ids)
	}
	// A's user cannot be made a member of B's project either.
	bp := b.CreateProject(t, map[string]any{"name": "b"})["id"].(string)
	apitest.WantError(t, b.Do(t, "POST", apitest.ProjectBase+"member/add",
		map[string]any{"projectId": bp, "userId": a.UserID}), 400, "VALIDATION_FAILED")
	// Nor its owner or an initial member, nor a risk's owner in B.
	apitest.WantError(t, b.Do(t, "POST", apitest.ProjectBase+"create",
		map[string]any{"name": "x", "ownerId": a.UserID}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, b.Do(t, "POST", apitest.ProjectBase+"create",
		map[string]any{"name": "x", "memberIds": []string{a.UserID}}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, b.Do(t, "POST", apitest.ProjectBase+"update", map[string]any{"id": bp, "ownerId": a.UserID}),
		400, "VALIDATION_FAILED")
	apitest.WantError(t, b.Do(t, "POST", apitest.RiskBase+"create",
		map[string]any{"projectId": bp, "title": "x", "ownerId": a.UserID}), 400, "VALIDATION_FAILED")
	if ids := b.Get(t, apitest.ProjectBase+"list",
		map[string]string{"ownerId": a.UserID, "includeArchived": "true"}).IDs(); len(ids) != 0 {
		t.Errorf("B lists projects by A's user: %v", ids)
	}
	if r := a.Get(t, apitest.ProjectBase+"detail", map[string]string{"id": id}); r.Str("name") != "secret plans" {
		t.Errorf("A's project changed: %s", r.Raw)
	}
}

func TestProjectScopes(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t, "projects:read")
	r := tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "x"})
	apitest.WantError(t, r, 403, "INSUFFICIENT_SCOPE")
	if r.Body["error"].(map[string]any)["details"].(map[string]any)["scope"] != "projects:write" {
		t.Errorf("details.scope: %s", r.Raw)
	}
	if got := tn.Get(t, apitest.ProjectBase+"list", nil); got.Status != 200 {
		t.Errorf("read with projects:read: %d", got.Status)
	}
	none := tn.WithKey(tn.NewKey(t, "tasks:read"))
	apitest.WantError(t, none.Get(t, apitest.ProjectBase+"list", nil), 403, "INSUFFICIENT_SCOPE")
}

func TestProjectMembers(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateProject(t, map[string]any{"name": "m"})["id"].(string)
	add := tn.Do(t, "POST", apitest.ProjectBase+"member/add",
		map[string]any{"projectId": id, "userId": tn.UserID, "role": "OWNER"})
	if add.Status != 201 || len(add.Data()["members"].([]any)) != 1 {
		t.Fatalf("add: %d %s", add.Status, add.Raw)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ProjectBase+"member/add",
		map[string]any{"projectId": id, "userId": tn.UserID}), 409, "CONFLICT")
	list := tn.Get(t, apitest.ProjectBase+"members", map[string]string{"projectId": id})
	if list.Status != 200 || len(list.Items()) != 1 || list.Items()[0]["role"] != "OWNER" {
		t.Fatalf("members: %s", list.Raw)
	}
	rm := tn.Do(t, "POST", apitest.ProjectBase+"member/remove", map[string]any{"projectId": id, "userId": tn.UserID})
	if rm.Status != 201 || len(rm.Data()["members"].([]any)) != 0 {
		t.Fatalf("remove: %s", rm.Raw)
	}
	apitest.WantError(t, tn.Do(t, "POST", apitest.ProjectBase+"member/remove",
		map[string]any{"projectId": id, "userId": tn.UserID}), 404, "NOT_FOUND")
	added, removed := tn.EventsOf(t, "project.member_added"), tn.EventsOf(t, "project.member_removed")
	if len(added) != 1 || len(removed) != 1 || added[0].Data["userId"] != tn.UserID ||
		added[0].Data["projectId"] != id || added[0].Data["role"] != "OWNER" {
		t.Errorf("member events: %v %v", added, removed)
	}
}

// TestProjectDeleteCascadesToEveryChild deletes an archived project holding a
// member, a task, a risk, a note and an analysis: all go, each with its
// deleted event (and its fan-out job), and the answer counts them under
// camelCase keys, as every key of the API is.
func TestProjectDeleteCascadesToEveryChild(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "doomed", "memberIds": []string{tn.UserID}})["id"].(string)
	tsk := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "t"})["id"].(string)
	rsk := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "r"})["id"].(string)
	note := tn.Do(t, "POST", apitest.NoteBase+"create", map[string]any{"projectId": prj, "body": "n"}).Str("id")
	tn.CreateRRCA(t, map[string]any{"title": "a", "problemStatement": "p", "projectId": prj})
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	del := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": prj})
	if del.Status != 201 {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	counts := del.Data()["cascaded"].(map[string]any)
	for _, k := range []string{"tasks", "risks", "notes", "rrcaAnalyses", "members"} {
		if counts[k] != float64(1) {
			t.Errorf("cascaded[%s] = %v, want 1: %v", k, counts[k], counts)
		}
	}
	for k := range counts {
		if strings.Contains(k, "_") {
			t.Errorf("cascaded key %q is not camelCase: %v", k, counts)
		}
	}
	apitest.WantError(t, tn.Get(t, apitest.ProjectBase+"detail", map[string]string{"id": prj}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.ProjectBase+"members", map[string]string{"projectId": prj}),
		404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.TaskBase+"detail", map[string]string{"id": tsk}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.RiskBase+"detail", map[string]string{"id": rsk}), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.NoteBase+"detail", map[string]string{"id": note}), 404, "NOT_FOUND")
	for typ, field := range map[string]string{"task.deleted": "taskId", "risk.deleted": "riskId",
		"note.deleted": "noteId", "project.deleted": "projectId"} {
		evs := tn.EventsOf(t, typ)
		want := map[string]string{"task.deleted": tsk, "risk.deleted": rsk, "note.deleted": note,
			"project.deleted": prj}[typ]
		if len(evs) != 1 || evs[0].Data[field] != want || evs[0].Jobs != 1 {
			t.Errorf("%s events: %v", typ, evs)
		}
	}
}
