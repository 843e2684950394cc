package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// matchCase is how a test reaches one operation that honours If-Match.
type matchCase struct {
	// row makes a fresh row of tn in project and returns its id; detail is
	// its detail GET.
	row    func(t *testing.T, tn *apitest.Tenant, project string) string
	detail func(id string) string
	// prepare puts the row in the state the operation needs (archived, for a
	// restore), without If-Match.
	prepare func(t *testing.T, tn *apitest.Tenant, id string)
	// do is the operation on the row; touch is another change of it, made to
	// turn an ETag stale.
	do, touch func(tn *apitest.Tenant, id string) apitest.Request
}

func matchCases(project string) map[string]matchCase {
	post := func(path string, body func(id string) map[string]any) func(*apitest.Tenant, string) apitest.Request {
		return func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "POST", Path: path, Body: body(id)}
		}
	}
	patch := func(path string, body func(id string) map[string]any) func(*apitest.Tenant, string) apitest.Request {
		return func(tn *apitest.Tenant, id string) apitest.Request {
			r := post(path, body)(tn, id)
			r.Method = "PATCH"
			return r
		}
	}
	by := func(field string, more ...any) func(id string) map[string]any {
		return func(id string) map[string]any {
			b := map[string]any{field: id}
			for i := 0; i+1 < len(more); i += 2 {
				b[more[i].(string)] = more[i+1]
			}
			return b
		}
	}
	detail := func(kind string) func(string) string {
		return func(id string) string { return condR + kind + "/detail?id=" + id }
	}
	archive := func(kind, field string) func(*testing.T, *apitest.Tenant, string) {
		return func(t *testing.T, tn *apitest.Tenant, id string) {
			mustStatus(t, tn.Do(t, "POST", condR+kind+"/archive", map[string]any{field: id}), 201)
		}
	}
	task := func(t *testing.T, tn *apitest.Tenant, p string) string {
		return tn.CreateTask(t, map[string]any{"projectId": p, "title": "Matched"})["id"].(string)
	}
	risk := func(t *testing.T, tn *apitest.Tenant, p string) string {
		return tn.CreateRisk(t, map[string]any{"projectId": p, "title": "Matched"})["id"].(string)
	}
	item := func(t *testing.T, tn *apitest.Tenant, p string) string {
		return tn.CreateActionItem(t, map[string]any{"projectId": p, "title": "Matched"})["id"].(string)
	}
	newProject := func(t *testing.T, tn *apitest.Tenant, _ string) string {
		return tn.CreateProject(t, map[string]any{"name": "Matched"})["id"].(string)
	}
	rrca := func(t *testing.T, tn *apitest.Tenant, p string) string {
		return tn.CreateRRCA(t, map[string]any{"title": "Matched", "problemStatement": "Why", "projectId": p})
	}
	rrcaDetail := func(id string) string { return condR + "rrca/" + id }
	rrcaTouch := func(_ *apitest.Tenant, id string) apitest.Request {
		return apitest.Request{Method: "PATCH", Path: condR + "rrca/" + id, Body: map[string]any{"title": "Touched"}}
	}
	rrcaArchive := func(t *testing.T, tn *apitest.Tenant, id string) {
		mustStatus(t, tn.Do(t, "POST", condR+"rrca/"+id+"/archive", nil), 201)
	}
	rrcaPost := func(sub string) func(*apitest.Tenant, string) apitest.Request {
		return func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "POST", Path: condR + "rrca/" + id + sub}
		}
	}
	touch := func(kind, field string, more ...any) func(*apitest.Tenant, string) apitest.Request {
		return post(condR+kind+"/update", by(field, more...))
	}
	cases := map[string]matchCase{
		"updateTask": {row: task, detail: detail("task"), touch: touch("task", "taskId", "title", "Touched"),
			do: post(condR+"task/update", by("taskId", "status", "IN_PROGRESS"))},
		"patchTask": {row: task, detail: detail("task"), touch: touch("task", "taskId", "title", "Touched"),
			do: patch(condR+"task/update", by("taskId", "priority", 1))},
		"archiveTask": {row: task, detail: detail("task"), touch: touch("task", "taskId", "title", "Touched"),
			do: post(condR+"task/archive", by("taskId"))},
		"restoreTask": {row: task, detail: detail("task"), prepare: archive("task", "taskId"),
			touch: touch("task", "taskId", "title", "Touched"), do: post(condR+"task/restore", by("taskId"))},
		"updateRisk": {row: risk, detail: detail("risk"), touch: touch("risk", "riskId", "title", "Touched"),
			do: post(condR+"risk/update", by("riskId", "severity", "HIGH"))},
		"patchRisk": {row: risk, detail: detail("risk"), touch: touch("risk", "riskId", "title", "Touched"),
			do: patch(condR+"risk/update", by("riskId", "severity", "LOW"))},
		"archiveRisk": {row: risk, detail: detail("risk"), touch: touch("risk", "riskId", "title", "Touched"),
			do: post(condR+"risk/archive", by("riskId"))},
		"restoreRisk": {row: risk, detail: detail("risk"), prepare: archive("risk", "riskId"),
			touch: touch("risk", "riskId", "title", "Touched"), do: post(condR+"risk/restore", by("riskId"))},
		"updateActionItem": {row: item, detail: detail("action-item"),
			touch: touch("action-item", "actionItemId", "title", "Touched"),
			do:    post(condR+"action-item/update", by("actionItemId", "ownerHint", "team"))},
		"archiveActionItem": {row: item, detail: detail("action-item"),
			touch: touch("action-item", "actionItemId", "title", "Touched"),
			do:    post(condR+"action-item/archive", by("actionItemId"))},
		"restoreActionItem": {row: item, detail: detail("action-item"), prepare: archive("action-item", "actionItemId"),
			touch: touch("action-item", "actionItemId", "title", "Touched"),
			do:    post(condR+"action-item/restore", by("actionItemId"))},
		"updateProject": {row: newProject, detail: detail("project"), touch: touch("project", "id", "name", "Touched"),
			do: post(condR+"project/update", by("id", "ragStatus", "RED"))},
		"archiveProject": {row: newProject, detail: detail("project"), touch: touch("project", "id", "name", "Touched"),
			do: post(condR+"project/archive", by("id"))},
		"restoreProject": {row: newProject, detail: detail("project"), prepare: archive("project", "id"),
			touch: touch("project", "id", "name", "Touched"), do: post(condR+"project/restore", by("id"))},
		"updateRRCA": {row: rrca, detail: rrcaDetail, touch: rrcaTouch,
			do: func(_ *apitest.Tenant, id string) apitest.Request {
				return apitest.Request{Method: "PATCH", Path: condR + "rrca/" + id,
					Body: map[string]any{"problemStatement": "Why, again"}}
			}},
		"advanceRRCA": {row: rrca, detail: rrcaDetail, touch: rrcaTouch, do: rrcaPost("/advance")},
		"archiveRRCA": {row: rrca, detail: rrcaDetail, touch: rrcaTouch, do: rrcaPost("/archive")},
		"restoreRRCA": {row: rrca, detail: rrcaDetail, touch: rrcaTouch, prepare: rrcaArchive, do: rrcaPost("/restore")},
		"updateNote":  noteCase("POST"),
		"patchNote":   noteCase("PATCH"),
		"attachActionItemProject": {row: func(t *testing.T, tn *apitest.Tenant, _ string) string {
			return tn.CreateActionItem(t, map[string]any{"title": "Loose"})["id"].(string)
		}, detail: detail("action-item"), touch: touch("action-item", "actionItemId", "title", "Touched"),
			do: func(_ *apitest.Tenant, id string) apitest.Request {
				return apitest.Request{Method: "POST", Path: condR + "action-item/attach-project",
					Body: map[string]any{"actionItemId": id, "projectId": project}}
			}},
	}
	return cases
}

func noteCase(method string) matchCase {
	return matchCase{
		row: func(t *testing.T, tn *apitest.Tenant, p string) string {
			return tn.Created(t, condR+"note/create", map[string]any{"projectId": p, "body": "Matched"})["id"].(string)
		},
		detail: func(id string) string { return condR + "note/detail?id=" + id },
		touch: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "POST", Path: condR + "note/update", Body: map[string]any{"noteId": id,
				"body": "Touched"}}
		},
		do: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: method, Path: condR + "note/update", Body: map[string]any{"noteId": id,
				"body": "Rewritten"}}
		},
	}
}

// send sends req as tn with If-Match when given.
func send(t *testing.T, env *apitest.Env, tn *apitest.Tenant, req apitest.Request, ifMatch string) *apitest.Response {
	t.Helper()
	req.Header = map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key}
	if ifMatch != "" {
		req.Header["If-Match"] = ifMatch
	}
	return env.Do(t, req)
}

// TestIfMatch holds every operation the table marks IfMatch to it: a stale
// ETag (or a weak one) is 412 PRECONDITION_FAILED and changes and emits
// nothing, the ETag a GET just gave proceeds, * proceeds, and another
// workspace's credentials are 404 whatever they send.
func TestIfMatch(t *testing.T) {
	env := apitest.New(t)
	a, b := env.NewTenant(t), env.NewTenant(t)
	project := a.CreateProject(t, map[string]any{"name": "Matching"})["id"].(string)
	cases := matchCases(project)
	seen := 0
	for _, op := range env.Server.Operations() {
		if !op.IfMatch {
			continue
		}
		seen++
		c, ok := cases[op.ID]
		if !ok {
			t.Errorf("%s (%s %s) honours If-Match and has no case here: add one", op.ID, op.Method, op.Path)
			continue
		}
		t.Run(op.ID, func(t *testing.T) {
			id := c.row(t, a, project)
			if c.prepare != nil {
				c.prepare(t, a, id)
			}
			stale := mustStatus(t, a.Get(t, c.detail(id), nil), 200).Header.Get("ETag")
			mustStatus(t, send(t, env, a, c.touch(a, id), ""), statusOf(c.touch(a, id)))
			before := mustStatus(t, a.Get(t, c.detail(id), nil), 200)
			current := before.Header.Get("ETag")
			events := len(a.Events(t))
			for _, tag := range []string{stale, "W/" + current, `"x", ` + stale} {
				r := send(t, env, a, c.do(a, id), tag)
				apitest.WantError(t, r, 412, "PRECONDITION_FAILED")
			}
			if after := a.Get(t, c.detail(id), nil); after.Header.Get("ETag") != current {
				t.Errorf("a refused If-Match changed the row: %s", after.Raw)
			}
			if n := len(a.Events(t)); n != events {
				t.Errorf("a refused If-Match emitted %d events", n-events)
			}
			apitest.WantError(t, send(t, env, b, c.do(a, id), current), 404, "NOT_FOUND")
			apitest.WantError(t, send(t, env, b, c.do(a, id), "*"), 404, "NOT_FOUND")
			if r := send(t, env, a, c.do(a, id), `"x", `+current); r.Status >= 300 {
				t.Fatalf("If-Match with the current ETag: %d %s", r.Status, r.Raw)
			}
			if after := a.Get(t, c.detail(id), nil); after.Header.Get("ETag") == current {
				t.Errorf("the operation with the current ETag changed nothing: %s", after.Raw)
			}
			star := c.row(t, a, project)
			if c.prepare != nil {
				c.prepare(t, a, star)
			}
			if r := send(t, env, a, c.do(a, star), "*"); r.Status >= 300 {
				t.Errorf("If-Match: * on an existing row: %d %s", r.Status, r.Raw)
			}
		})
	}
	if seen < len(cases) {
		t.Errorf("%d operations honour If-Match, the cases name %d", seen, len(cases))
	}
}

// statusOf is the success status of a touch: PATCH answers 200, POST 201.
func statusOf(req apitest.Request) int {
	if req.Method == "PATCH" {
		return 200
	}
	return 201
}
