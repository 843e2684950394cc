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
	// session sends the operation, its touch and its detail GET with the
	// console session rather than the app's key.
	session bool
}

func matchCases(owner *apitest.Tenant, project string) map[string]matchCase {
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
	// The console's app and the two route sets of a subscription, which have
	// no project.
	cases["updateApp"] = appCase("", map[string]any{"description": "Matched"})
	cases["setAppScopes"] = appCase("/scopes", map[string]any{"scopes": []string{"tasks:read"}})
	cases["updateWebhook"] = subscriptionCase(owner, true)
	cases["updateWebhookSubscription"] = subscriptionCase(owner, false)
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

// appCase changes an app made for it through the console at path (under the
// app) with body.
func appCase(path string, body map[string]any) matchCase {
	const apps = "/openapi/v1/apps/"
	return matchCase{session: true,
		row: func(t *testing.T, tn *apitest.Tenant, _ string) string {
			return mustStatus(t, tn.Console(t, "POST", "/openapi/v1/apps", map[string]any{
				"workspaceId": tn.WorkspaceID, "name": "Matched", "scopes": []string{}}), 201).Str("clientId")
		},
		detail: func(id string) string { return apps + id },
		touch: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "PATCH", Path: apps + id, Body: map[string]any{"name": "Touched"}}
		},
		do: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "PATCH", Path: apps + id + path, Body: body}
		},
	}
}

// subscriptionCase changes a subscription of owner's app on the console's
// routes (session) or on the app's own (its key).
func subscriptionCase(owner *apitest.Tenant, session bool) matchCase {
	at := func(id string) string {
		if session {
			return "/openapi/v1/apps/" + owner.ClientID + "/webhooks/" + id
		}
		return "/openapi/v1/webhooks/subscriptions/" + id
	}
	return matchCase{session: session,
		row: func(t *testing.T, tn *apitest.Tenant, _ string) string {
			id, _ := tn.Subscribe(t, "https://127.0.0.1:9/hook", "task.created")
			return id
		},
		detail: at,
		touch: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "PATCH", Path: at(id), Body: map[string]any{"events": []string{"*"}}}
		},
		do: func(_ *apitest.Tenant, id string) apitest.Request {
			return apitest.Request{Method: "PATCH", Path: at(id), Body: map[string]any{"maxPerSecond": 5}}
		},
	}
}

// sendCase sends req as tn with the credentials c's operation takes.
func sendCase(t *testing.T, env *apitest.Env, tn *apitest.Tenant, c matchCase, req apitest.Request,
	ifMatch string) *apitest.Response {
	t.Helper()
	if !c.session {
		return send(t, env, tn, req, ifMatch)
	}
	req.Header = map[string]string{"X-Client-ID": tn.ConsoleID}
	req.Cookies = map[string]string{"sid": tn.SID}
	if ifMatch != "" {
		req.Header["If-Match"] = ifMatch
	}
	return env.Do(t, req)
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
	env := apitest.New(t, func(d *apitest.Config) { d.WebhookAllowLoopback = true })
	a, b := env.NewTenant(t), env.NewTenant(t)
	project := a.CreateProject(t, map[string]any{"name": "Matching"})["id"].(string)
	cases := matchCases(a, project)
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
			get := func(id string) *apitest.Response {
				return sendCase(t, env, a, c, apitest.Request{Method: "GET", Path: c.detail(id)}, "")
			}
			id := c.row(t, a, project)
			if c.prepare != nil {
				c.prepare(t, a, id)
			}
			stale := mustStatus(t, get(id), 200).Header.Get("ETag")
			mustStatus(t, sendCase(t, env, a, c, c.touch(a, id), ""), statusOf(c.touch(a, id)))
			current := mustStatus(t, get(id), 200).Header.Get("ETag")
			events, audited := len(a.Events(t)), lastAudit(t, a)
			for _, tag := range []string{stale, "W/" + current, `"x", ` + stale} {
				r := sendCase(t, env, a, c, c.do(a, id), tag)
				apitest.WantError(t, r, 412, "PRECONDITION_FAILED")
			}
			if after := get(id); after.Header.Get("ETag") != current {
				t.Errorf("a refused If-Match changed the row: %s", after.Raw)
			}
			if n := len(a.Events(t)); n != events {
				t.Errorf("a refused If-Match emitted %d events", n-events)
			}
			if last := lastAudit(t, a); last != audited {
				t.Errorf("a refused If-Match was audited: %s", last)
			}
			apitest.WantError(t, sendCase(t, env, b, c, c.do(a, id), current), 404, "NOT_FOUND")
			apitest.WantError(t, sendCase(t, env, b, c, c.do(a, id), "*"), 404, "NOT_FOUND")
			if r := sendCase(t, env, a, c, c.do(a, id), `"x", `+current); r.Status >= 300 {
				t.Fatalf("If-Match with the current ETag: %d %s", r.Status, r.Raw)
			}
			if after := get(id); after.Header.Get("ETag") == current {
				t.Errorf("the operation with the current ETag changed nothing: %s", after.Raw)
			}
			star := c.row(t, a, project)
			if c.prepare != nil {
				c.prepare(t, a, star)
			}
			if r := sendCase(t, env, a, c, c.do(a, star), "*"); r.Status >= 300 {
				t.Errorf("If-Match: * on an existing row: %d %s", r.Status, r.Raw)
			}
		})
	}
	if seen < len(cases) {
		t.Errorf("%d operations honour If-Match, the cases name %d", seen, len(cases))
	}
}

// lastAudit is the id of tn's newest audit entry.
func lastAudit(t *testing.T, tn *apitest.Tenant) string {
	t.Helper()
	items := mustStatus(t, tn.Console(t, "GET", "/openapi/v1/audit?limit=1", nil), 200).Items()
	if len(items) == 0 {
		t.Fatal("the workspace's audit log is empty")
	}
	return items[0]["id"].(string)
}

// statusOf is the success status of a touch: PATCH answers 200, POST 201.
func statusOf(req apitest.Request) int {
	if req.Method == "PATCH" {
		return 200
	}
	return 201
}

// TestIfMatchOtherApp: a subscription of another app of the same workspace
// stays 404 on both route sets whatever If-Match names, its own current ETag
// or "*", and is left as it was.
func TestIfMatchOtherApp(t *testing.T) {
	env := apitest.New(t, func(d *apitest.Config) { d.WebhookAllowLoopback = true })
	a := env.NewTenant(t)
	id, _ := a.Subscribe(t, "https://127.0.0.1:9/hook", "task.created")
	detail := "/openapi/v1/apps/" + a.ClientID + "/webhooks/" + id
	current := mustStatus(t, a.Console(t, "GET", detail, nil), 200).Header.Get("ETag")
	other := *a
	other.ClientID = mustStatus(t, a.Console(t, "POST", "/openapi/v1/apps", map[string]any{
		"workspaceId": a.WorkspaceID, "name": "Other", "scopes": []string{"webhooks:read", "webhooks:write"}}),
		201).Str("clientId")
	other.Key = other.NewKey(t, "webhooks:read", "webhooks:write")
	body := map[string]any{"maxPerSecond": 5}
	for _, tag := range []string{current, "*"} {
		apitest.WantError(t, send(t, env, &other, apitest.Request{Method: "PATCH",
			Path: "/openapi/v1/webhooks/subscriptions/" + id, Body: body}, tag), 404, "NOT_FOUND")
		apitest.WantError(t, sendCase(t, env, a, matchCase{session: true}, apitest.Request{Method: "PATCH",
			Path: "/openapi/v1/apps/" + other.ClientID + "/webhooks/" + id, Body: body}, tag), 404, "NOT_FOUND")
	}
	if after := a.Console(t, "GET", detail, nil); after.Header.Get("ETag") != current {
		t.Errorf("another app's update changed the subscription: %s", after.Raw)
	}
}
