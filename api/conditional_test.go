package api_test

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// condWorld is what the conditional GETs read: one of each row, in workspace
// a, and workspace b, whose credentials must not learn anything of a's.
type condWorld struct {
	env                        *apitest.Env
	a, b, c                    *apitest.Tenant
	rcv                        *apitest.Receiver
	project, task, risk, note  string
	item, rrca, node           string
	run5, runLA, sub, delivery string
	userCode, lookAcrossRRCA   string
}

// condCase is how a test reaches one GET route and changes what it answers.
type condCase struct {
	console bool
	// alone marks a route whose change would take rights the other cases
	// need: it runs as a tenant of its own (w.c).
	alone bool
	path  func(w *condWorld) string // with its query
	// own marks a route with an id of a's in it: b's credentials get 404.
	own bool
	// change alters the answer; with async the new answer comes from
	// background work, looked for once the workers run.
	change func(t *testing.T, w *condWorld)
	async  bool
}

const condR = "/openapi/v1/resource/"

func condCases() map[string]condCase {
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return path + "?" + v.Encode()
	}
	rrca := func(w *condWorld) string { return condR + "rrca/" + w.rrca }
	update := func(path, idField string, id func(w *condWorld) string, body map[string]any) func(*testing.T, *condWorld) {
		return func(t *testing.T, w *condWorld) {
			b := map[string]any{idField: id(w)}
			for k, v := range body {
				b[k] = v
			}
			mustStatus(t, w.a.Do(t, "POST", condR+path, b), 201)
		}
	}
	return map[string]condCase{
		"getSession": {console: true, path: func(*condWorld) string { return "/openapi/v1/session" },
			change: func(t *testing.T, w *condWorld) {
				// No route renames a user; the operator's database does.
				ctx := context.Background()
				tx, err := testdb.OwnerPool(t).Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback(ctx) }()
				if err := testdb.BindWorkspace(t, tx, w.a.WorkspaceID); err != nil {
					t.Fatal(err)
				}
				tag, err := tx.Exec(ctx, "update users set name = 'Renamed' where workspace_id = $1 and id = $2",
					w.a.WorkspaceID, w.a.UserID)
				if err != nil || tag.RowsAffected() != 1 {
					t.Fatal(tag, err)
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}},
		"listApps": {console: true, path: func(*condWorld) string { return "/openapi/v1/apps" },
			change: func(t *testing.T, w *condWorld) { renameApp(t, w, "listed") }},
		"getApp": {console: true, own: true, path: func(w *condWorld) string { return "/openapi/v1/apps/" + w.a.ClientID },
			change: func(t *testing.T, w *condWorld) { renameApp(t, w, "detailed") }},
		"listKeys": {console: true, own: true,
			path:   func(w *condWorld) string { return "/openapi/v1/apps/" + w.a.ClientID + "/keys" },
			change: func(t *testing.T, w *condWorld) { w.a.NewKey(t, "tasks:read") }},
		"getCredential": {alone: true, path: func(*condWorld) string { return "/openapi/v1/me" },
			change: func(t *testing.T, w *condWorld) {
				mustStatus(t, w.c.Console(t, "PATCH", "/openapi/v1/apps/"+w.c.ClientID+"/scopes",
					map[string]any{"scopes": []string{"tasks:read", "tasks:write", "projects:read"}}), 200)
			}},
		"listProjects": {path: func(*condWorld) string { return q(condR + "project/list") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateProject(t, map[string]any{"name": "Another"})
			}},
		"getProject": {own: true, path: func(w *condWorld) string { return q(condR+"project/detail", "id", w.project) },
			change: update("project/update", "id", func(w *condWorld) string { return w.project },
				map[string]any{"name": "Renamed"})},
		"listProjectMembers": {own: true,
			path: func(w *condWorld) string { return q(condR+"project/members", "projectId", w.project) },
			change: func(t *testing.T, w *condWorld) {
				user := mustStatus(t, w.env.Do(t, apitest.Request{Method: "POST",
					Path:   "/admin/v1/workspaces/" + w.a.WorkspaceID + "/users",
					Header: w.env.Admin(), Body: map[string]any{"email": "member@example.com", "name": "Member"}}), 201)
				mustStatus(t, w.a.Do(t, "POST", condR+"project/member/add",
					map[string]any{"projectId": w.project, "userId": user.Str("id")}), 201)
			}},
		"listTasks": {path: func(w *condWorld) string { return q(condR+"task/list", "projectId", w.project) },
			change: update("task/update", "taskId", func(w *condWorld) string { return w.task },
				map[string]any{"status": "IN_PROGRESS"})},
		"getTask": {own: true, path: func(w *condWorld) string { return q(condR+"task/detail", "id", w.task) },
			change: update("task/update", "taskId", func(w *condWorld) string { return w.task },
				map[string]any{"title": "Detail renamed"})},
		"listRisks": {path: func(w *condWorld) string { return q(condR + "risk/list") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateRisk(t, map[string]any{"projectId": w.project, "title": "Newer risk"})
			}},
		"getRisk": {own: true, path: func(w *condWorld) string { return q(condR+"risk/detail", "id", w.risk) },
			change: update("risk/update", "riskId", func(w *condWorld) string { return w.risk },
				map[string]any{"title": "Risk renamed"})},
		"listNotes": {path: func(w *condWorld) string { return q(condR+"note/list", "projectId", w.project) },
			change: func(t *testing.T, w *condWorld) {
				w.a.Created(t, condR+"note/create", map[string]any{"projectId": w.project, "body": "Newer note"})
			}},
		"getNote": {own: true, path: func(w *condWorld) string { return q(condR+"note/detail", "id", w.note) },
			change: update("note/update", "noteId", func(w *condWorld) string { return w.note },
				map[string]any{"body": "Note rewritten"})},
		"listActionItems": {path: func(w *condWorld) string { return q(condR + "action-item/list") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateActionItem(t, map[string]any{"title": "Newer item", "projectId": w.project})
			}},
		"getActionItem": {own: true, path: func(w *condWorld) string { return q(condR+"action-item/detail", "id", w.item) },
			change: update("action-item/update", "actionItemId", func(w *condWorld) string { return w.item },
				map[string]any{"title": "Item renamed"})},
		"listActionItemLogs": {own: true,
			path: func(w *condWorld) string { return q(condR + "action-item/" + w.item + "/logs") },
			change: func(t *testing.T, w *condWorld) {
				mustStatus(t, w.a.Do(t, "POST", condR+"action-item/"+w.item+"/log",
					map[string]any{"kind": "NOTE", "message": "A log line"}), 201)
			}},
		"listRRCA": {path: func(*condWorld) string { return q(condR + "rrca") },
			change: func(t *testing.T, w *condWorld) { renameRRCA(t, w, "Listed analysis renamed") }},
		"getRRCA": {own: true, path: rrca,
			change: func(t *testing.T, w *condWorld) { renameRRCA(t, w, "Detailed analysis renamed") }},
		"listRRCANodes": {own: true, path: func(w *condWorld) string { return q(rrca(w) + "/nodes") },
			change: func(t *testing.T, w *condWorld) { w.a.AddNode(t, w.rrca, "WHY", "Why again", w.node) }},
		"listCorrectiveActions": {own: true, path: func(w *condWorld) string { return q(rrca(w) + "/corrective-actions") },
			change: func(t *testing.T, w *condWorld) {
				mustStatus(t, w.a.Do(t, "POST", rrca(w)+"/corrective-actions",
					map[string]any{"nodeId": w.node, "title": "Check the torque"}), 201)
			}},
		"listSimilarRRCA": {own: true, async: true, path: func(w *condWorld) string { return q(rrca(w) + "/similar") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateRRCA(t, map[string]any{"title": "Press cylinder leak again",
					"problemStatement": "Oil leak at the press cylinder seal", "projectId": w.project})
			}},
		"getFiveWhyRun": {own: true, async: true,
			path: func(w *condWorld) string { return rrca(w) + "/5why/suggestions/" + w.run5 }},
		"listLookAcross": {own: true, async: true,
			path: func(w *condWorld) string { return q(condR + "rrca/" + w.lookAcrossRRCA + "/look-across") }},
		"getLookAcrossRun": {own: true, async: true,
			path: func(w *condWorld) string { return condR + "rrca/" + w.lookAcrossRRCA + "/look-across/runs/" + w.runLA }},
		"listWebhooks": {console: true, own: true,
			path: func(w *condWorld) string { return "/openapi/v1/apps/" + w.a.ClientID + "/webhooks" },
			change: func(t *testing.T, w *condWorld) {
				mustStatus(t, w.a.Console(t, "PATCH", "/openapi/v1/apps/"+w.a.ClientID+"/webhooks/"+w.sub,
					map[string]any{"maxPerSecond": 5}), 200)
			}},
		"listAudit": {console: true, path: func(*condWorld) string { return q("/openapi/v1/audit") },
			change: func(t *testing.T, w *condWorld) { renameApp(t, w, "audited") }},
		"getWebhook": {console: true, own: true,
			path:   func(w *condWorld) string { return "/openapi/v1/apps/" + w.a.ClientID + "/webhooks/" + w.sub },
			change: func(t *testing.T, w *condWorld) { capDeliveries(t, w, 7) }},
		"listWebhookSubscriptions": {path: func(*condWorld) string { return q("/openapi/v1/webhooks/subscriptions") },
			change: func(t *testing.T, w *condWorld) { capDeliveries(t, w, 9) }},
		"getWebhookSubscription": {own: true,
			path:   func(w *condWorld) string { return "/openapi/v1/webhooks/subscriptions/" + w.sub },
			change: func(t *testing.T, w *condWorld) { capDeliveries(t, w, 11) }},
		"listDeliveries": {path: func(*condWorld) string { return q("/openapi/v1/webhooks/deliveries") },
			change: func(t *testing.T, w *condWorld) { testDelivery(t, w) }},
		// A delivery's record changes only with its attempts, and the test
		// delivery's one attempt is made before it answers: these two show
		// the ETag and 304, the delivery lists show it following changes.
		"getDelivery": {own: true,
			path: func(w *condWorld) string { return "/openapi/v1/webhooks/deliveries/" + w.delivery }},
		"listAppDeliveries": {console: true, own: true,
			path:   func(w *condWorld) string { return q("/openapi/v1/apps/" + w.a.ClientID + "/deliveries") },
			change: func(t *testing.T, w *condWorld) { testDelivery(t, w) }},
		"getAppDelivery": {console: true, own: true,
			path: func(w *condWorld) string { return "/openapi/v1/apps/" + w.a.ClientID + "/deliveries/" + w.delivery }},
		"listEvents": {path: func(*condWorld) string { return q("/openapi/v1/events") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateTask(t, map[string]any{"projectId": w.project, "title": "An event more"})
			}},
		"search": {path: func(*condWorld) string { return q(condR+"search", "q", "quokka") },
			change: func(t *testing.T, w *condWorld) {
				w.a.CreateTask(t, map[string]any{"projectId": w.project, "title": "Feed the quokka"})
			}},
		"oauthDevicePending": {console: true,
			path:   func(w *condWorld) string { return q("/openapi/v1/oauth/device/pending", "user_code", w.userCode) },
			change: func(t *testing.T, w *condWorld) { renameApp(t, w, "pending") }},
	}
}

func mustStatus(t *testing.T, r *apitest.Response, want int) *apitest.Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%d, want %d: %s", r.Status, want, r.Raw)
	}
	return r
}

func renameApp(t *testing.T, w *condWorld, name string) {
	t.Helper()
	mustStatus(t, w.a.Console(t, "PATCH", "/openapi/v1/apps/"+w.a.ClientID, map[string]any{"name": name}), 200)
}

// capDeliveries changes the subscription's delivery cap through the console.
func capDeliveries(t *testing.T, w *condWorld, perSecond int) {
	t.Helper()
	mustStatus(t, w.a.Console(t, "PATCH", "/openapi/v1/apps/"+w.a.ClientID+"/webhooks/"+w.sub,
		map[string]any{"maxPerSecond": perSecond}), 200)
}

func renameRRCA(t *testing.T, w *condWorld, title string) {
	t.Helper()
	mustStatus(t, w.a.Do(t, "PATCH", condR+"rrca/"+w.rrca, map[string]any{"title": title}), 200)
}

func testDelivery(t *testing.T, w *condWorld) string {
	t.Helper()
	r := w.a.Console(t, "POST", "/openapi/v1/apps/"+w.a.ClientID+"/webhooks/"+w.sub+"/test", nil)
	if r.Status >= 300 {
		t.Fatalf("test event: %d %s", r.Status, r.Raw)
	}
	return r.Str("deliveryId")
}

// newCondWorld makes one of everything the GET routes read, with no worker
// running yet, so the runs and the delivery are still pending.
func newCondWorld(t *testing.T) *condWorld {
	rcv := apitest.NewReceiver(t)
	env := apitest.Reaching(t, rcv, true)
	w := &condWorld{env: env, a: env.NewTenant(t), b: env.NewTenant(t), c: env.NewTenant(t), rcv: rcv}
	a := w.a
	w.project = a.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	same := a.CreateProject(t, map[string]any{"name": "Line 7"})["id"].(string)
	a.CreateRisk(t, map[string]any{"projectId": same, "title": "Gland nut torque not checked on hydraulic cylinders"})
	w.task = a.CreateTask(t, map[string]any{"projectId": w.project, "title": "Task"})["id"].(string)
	w.risk = a.CreateRisk(t, map[string]any{"projectId": w.project, "title": "Risk"})["id"].(string)
	w.note = a.Created(t, condR+"note/create", map[string]any{"projectId": w.project, "body": "Note"})["id"].(string)
	w.item = a.CreateActionItem(t, map[string]any{"title": "Item", "projectId": w.project})["id"].(string)
	w.rrca = a.CreateRRCA(t, map[string]any{"title": "Press cylinder leak",
		"problemStatement": "Oil leak at the press cylinder", "projectId": w.project})
	w.node = a.AddNode(t, w.rrca, "ROOT_CAUSE", "No torque check of the gland nut", "")
	w.run5 = mustStatus(t, a.Do(t, "POST", condR+"rrca/"+w.rrca+"/5why/suggest", nil), 201).Str("id")
	w.lookAcrossRRCA = a.CreateRRCA(t, map[string]any{"title": "Cylinder leak",
		"problemStatement": "Oil leak at a cylinder", "projectId": w.project})
	root := a.AddNode(t, w.lookAcrossRRCA, "ROOT_CAUSE",
		"No torque check of the gland nut on hydraulic cylinders at assembly", "")
	mustStatus(t, a.Do(t, "POST", condR+"rrca/"+w.lookAcrossRRCA+"/corrective-actions",
		map[string]any{"nodeId": root, "title": "Add a gland nut torque check to the assembly checklist"}), 201)
	w.runLA = mustStatus(t, a.Do(t, "POST", condR+"rrca/"+w.lookAcrossRRCA+"/look-across/suggest", nil),
		201).Str("id")
	w.sub, _ = a.Subscribe(t, rcv.URL, "*")
	w.delivery = testDelivery(t, w)
	dc := env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device/code",
		Body: map[string]any{"client_id": a.ClientID}})
	w.userCode, _ = dc.Body["user_code"].(string)
	if w.userCode == "" {
		t.Fatalf("device code: %d %s", dc.Status, dc.Raw)
	}
	return w
}

// get sends GET path as tn (its key, or its console session) with
// If-None-Match when given.
func (w *condWorld) get(t *testing.T, tn *apitest.Tenant, c condCase, path, ifNoneMatch string) *apitest.Response {
	t.Helper()
	req := apitest.Request{Method: "GET", Path: path, Header: map[string]string{"X-Client-ID": tn.ClientID,
		"Authorization": tn.Key}}
	if c.console {
		req.Header = map[string]string{"X-Client-ID": tn.ConsoleID}
		req.Cookies = map[string]string{"sid": tn.SID}
	}
	if ifNoneMatch != "" {
		req.Header["If-None-Match"] = ifNoneMatch
	}
	return w.env.Do(t, req)
}

// notTheirs asks for a's answer with b's credentials and a's ETag: a route
// naming a's row is 404; a list or a session is b's own answer, the same
// ETag only when b's bytes are a's (an empty search, the same app scopes),
// and never with a's rows.
func (w *condWorld) notTheirs(t *testing.T, c condCase, path, tag string, first *apitest.Response) {
	t.Helper()
	other := w.get(t, w.b, c, path, tag)
	if c.own {
		if other.Status != 404 {
			t.Errorf("another workspace's credentials with a's ETag: %d %s, want 404", other.Status, other.Raw)
		}
		return
	}
	plain := w.get(t, w.b, c, path, "")
	if other.Status == 304 && plain.Header.Get("ETag") != tag {
		t.Errorf("304 to another workspace whose own answer has another ETag")
	}
	if plain.Header.Get("ETag") == tag && !bytes.Equal(plain.Raw, first.Raw) {
		t.Errorf("two different answers share ETag %s", tag)
	}
	for _, id := range []string{w.a.WorkspaceID, w.a.ClientID, w.project, w.task, w.rrca} {
		if bytes.Contains(plain.Raw, []byte(id)) {
			t.Errorf("another workspace's answer names %s of a's: %s", id, plain.Raw)
		}
	}
}

var strongTag = regexp.MustCompile(`^"[A-Za-z0-9_-]{11}"$`)

// TestConditionalGets holds every GET route the table marks as revalidating
// (Operation.Revalidates) to RFC 9110: an ETag on the 200, 304 with no body
// to If-None-Match naming it, a new ETag once its data changes, and nothing
// of it for another workspace's credentials.
func TestConditionalGets(t *testing.T) {
	w := newCondWorld(t)
	cases := condCases()
	var async []string
	tags := map[string]string{}
	for _, op := range w.env.Server.Operations() {
		if !op.Revalidates() {
			continue
		}
		c, ok := cases[op.ID]
		if !ok {
			t.Errorf("%s (GET %s) answers with an ETag and has no case here: add one", op.ID, op.Path)
			continue
		}
		t.Run(op.ID, func(t *testing.T) {
			path, a := c.path(w), w.a
			if c.alone {
				a = w.c
			}
			first := w.get(t, a, c, path, "")
			mustStatus(t, first, 200)
			tag := first.Header.Get("ETag")
			if !strongTag.MatchString(tag) {
				t.Fatalf("ETag %q is not a strong tag of 128 bits", tag)
			}
			for _, inm := range []string{tag, "W/" + tag, `"stale", ` + tag, "*"} {
				r := w.get(t, a, c, path, inm)
				if r.Status != 304 || len(r.Raw) != 0 {
					t.Fatalf("If-None-Match: %s answered %d %s, want 304 with no body", inm, r.Status, r.Raw)
				}
				if r.Header.Get("ETag") != tag || r.Header.Get("Cache-Control") == "" || r.Header.Get("Vary") == "" {
					t.Errorf("304 headers %v: ETag, Cache-Control and Vary as on the 200", r.Header)
				}
			}
			if r := w.get(t, a, c, path, `"stale"`); r.Status != 200 || r.Header.Get("ETag") != tag {
				t.Errorf("a stale If-None-Match answered %d (ETag %s), want 200 with %s", r.Status,
					r.Header.Get("ETag"), tag)
			}
			w.notTheirs(t, c, path, tag, first)
			if c.change == nil {
				return
			}
			c.change(t, w)
			if c.async {
				async = append(async, op.ID)
				tags[op.ID] = tag
				return
			}
			changed := w.get(t, a, c, path, tag)
			if changed.Status != 200 || changed.Header.Get("ETag") == tag {
				t.Errorf("after a change: %d, ETag %s (was %s), want 200 with a new ETag", changed.Status,
					changed.Header.Get("ETag"), tag)
			}
		})
	}
	// What background work writes (runs, similar analyses, delivery attempts)
	// changes once the workers run.
	w.env.StartWorkers(t)
	for _, id := range async {
		t.Run(id+"/after background work", func(t *testing.T) {
			c := cases[id]
			apitest.Eventually(t, apitest.JobWait, id+" changed", func() bool {
				r := w.get(t, w.a, c, c.path(w), tags[id])
				return r.Status == 200 && r.Header.Get("ETag") != tags[id]
			})
		})
	}
}

// TestNotModifiedTakesNoToken: a 304 leaves the rate limit as it was, so a
// client polling an unchanged list is never limited by it.
func TestNotModifiedTakesNoToken(t *testing.T) {
	env := apitest.New(t)
	tn := env.NewTenant(t)
	perMinute := 3
	mustStatus(t, env.Do(t, apitest.Request{Method: "PUT",
		Path:   "/admin/v1/workspaces/" + tn.WorkspaceID + "/apps/" + tn.ClientID + "/rate-limit",
		Header: env.Admin(), Body: map[string]any{"rateLimitPerMinute": perMinute}}), 200)
	get := func(inm string) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "GET", Path: condR + "project/list",
			Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "If-None-Match": inm}})
	}
	first := mustStatus(t, get(""), 200)
	remaining := first.Header.Get("X-RateLimit-Remaining")
	if remaining != strconv.Itoa(perMinute-1) {
		t.Fatalf("X-RateLimit-Remaining %q after one request of %d", remaining, perMinute)
	}
	for i := range 3 * perMinute {
		r := get(first.Header.Get("ETag"))
		if r.Status != 304 {
			t.Fatalf("conditional GET %d: %d %s", i, r.Status, r.Raw)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != remaining {
			t.Fatalf("conditional GET %d: X-RateLimit-Remaining %s, want %s", i, got, remaining)
		}
		if got := r.Header.Get("RateLimit"); got == "" || !regexp.MustCompile(`r=`+remaining+`;`).MatchString(got) {
			t.Fatalf("conditional GET %d: RateLimit %q, want r=%s", i, got, remaining)
		}
	}
	// The 200s still count.
	if r := mustStatus(t, get(`"stale"`), 200); r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(perMinute-2) {
		t.Errorf("a 200 after the 304s left X-RateLimit-Remaining %s", r.Header.Get("X-RateLimit-Remaining"))
	}
}

// TestMalformedIfNoneMatch is a 400 naming the header, not a condition
// silently dropped.
func TestMalformedIfNoneMatch(t *testing.T) {
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	for _, v := range []string{"abc", `"abc`, `"a" "b"`, `W/abc`, `"a",,x`, ","} {
		r := env.Do(t, apitest.Request{Method: "GET", Path: condR + "project/list",
			Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "If-None-Match": v}})
		apitest.WantError(t, r, 400, "VALIDATION_FAILED")
		if f := r.ErrorDetails()["field"]; f != "If-None-Match" {
			t.Errorf("If-None-Match: %s: details.field %v", v, f)
		}
	}
}
