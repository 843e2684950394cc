package webhook_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/resource/webhook"
)

// An app's own subscriptions, managed with its key (webhooks:write) on
// /openapi/v1/webhooks/subscriptions.
const ownSubs = "/openapi/v1/webhooks/subscriptions"

// verifyBoth checks a delivery as a receiver would, with both schemes'
// reference verifiers (stripe-go and the Standard Webhooks library) and
// pmapi's own, and returns its body's type and data.
func verifyBoth(t *testing.T, got apitest.Received, secret string) (string, map[string]any) {
	t.Helper()
	sig := got.Header.Get("X-Service-Signature")
	if err := stripewebhook.ValidatePayloadWithTolerance(got.Body, sig, secret, 300*time.Second); err != nil {
		t.Errorf("Stripe's verifier refuses %q: %v", sig, err)
	}
	if err := webhook.Verify(sig, got.Body, secret, time.Now()); err != nil {
		t.Errorf("pmapi's verifier refuses %q: %v", sig, err)
	}
	std, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the Standard Webhooks library cannot load the secret: %v", err)
	}
	if err := std.Verify(got.Body, got.Header); err != nil {
		t.Errorf("the Standard Webhooks library refuses the delivery: %v", err)
	}
	var body struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Type, body.Data
}

// anotherApp is a second app of tn's workspace with a key of scopes.
func anotherApp(t *testing.T, tn *apitest.Tenant, scopes ...string) *apitest.Tenant {
	t.Helper()
	r := tn.Console(t, "POST", "/openapi/v1/apps",
		map[string]any{"workspaceId": tn.WorkspaceID, "name": "other app", "scopes": apitest.AllScopes})
	if r.Status != 201 {
		t.Fatalf("create app: %d %s", r.Status, r.Raw)
	}
	other := *tn
	other.ClientID = r.Str("clientId")
	other.Key = other.NewKey(t, scopes...)
	return &other
}

func TestAppKeyManagesItsOwnSubscriptions(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	sibling := anotherApp(t, tn, webhook.ScopeRead, webhook.ScopeWrite)
	stranger := env.NewTenant(t)

	created := tn.Do(t, "POST", ownSubs, map[string]any{"url": rcv.URL + "/a", "events": []string{"project.created"}})
	if created.Status != 201 || created.Str("clientId") != tn.ClientID || created.Str("status") != "ACTIVE" ||
		created.Data()["projectIds"] != nil {
		t.Fatalf("create with the key: %d %s", created.Status, created.Raw)
	}
	id, secret := created.Str("id"), created.Str("secret")
	one := ownSubs + "/" + id

	if r := tn.Get(t, ownSubs, nil); r.Status != 200 || !slices.Equal(r.IDs(), []string{id}) ||
		r.Items()[0]["secret"] != nil {
		t.Errorf("the key's list: %d %s", r.Status, r.Raw)
	}
	if r := tn.Get(t, one, nil); r.Status != 200 || r.Str("url") != rcv.URL+"/a" || r.Data()["secret"] != nil {
		t.Errorf("the key's read: %d %s", r.Status, r.Raw)
	}
	// The console session keeps every right on the same subscription.
	console := "/openapi/v1/apps/" + tn.ClientID + "/webhooks"
	if r := tn.Console(t, "GET", console, nil); r.Status != 200 || !slices.Equal(r.IDs(), []string{id}) {
		t.Errorf("the console's list: %d %s", r.Status, r.Raw)
	}
	if r := tn.Console(t, "GET", console+"/"+id, nil); r.Status != 200 || r.Str("id") != id {
		t.Errorf("the console's read: %d %s", r.Status, r.Raw)
	}

	// PATCH changes what it names and leaves the rest.
	patched := tn.Do(t, "PATCH", one, map[string]any{"url": rcv.URL + "/b", "events": []string{"webhook.test",
		"task.created", "task.created"}, "maxPerSecond": 5})
	if patched.Status != 200 || patched.Str("url") != rcv.URL+"/b" ||
		!slices.Equal(apitest.Strings(patched.Data()["events"]), []string{"task.created", "webhook.test"}) ||
		patched.Data()["maxPerSecond"] != float64(5) || patched.Data()["projectIds"] != nil {
		t.Fatalf("patch: %d %s", patched.Status, patched.Raw)
	}
	if r := tn.Do(t, "PATCH", one, map[string]any{"maxPerSecond": nil}); r.Status != 200 ||
		r.Data()["maxPerSecond"] != nil || r.Str("url") != rcv.URL+"/b" ||
		len(apitest.Strings(r.Data()["events"])) != 2 {
		t.Errorf("patch maxPerSecond null: %d %s", r.Status, r.Raw)
	}
	for _, bad := range []map[string]any{{}, {"events": []string{}}, {"events": nil}, {"url": nil},
		{"events": []string{"task.exploded"}}, {"maxPerSecond": 0}, {"projectIds": []string{}},
		{"projectIds": []string{"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"}}, {"colour": "red"}} {
		apitest.WantError(t, tn.Do(t, "PATCH", one, bad), 400, "VALIDATION_FAILED")
	}

	// Test, rotate, disable, enable and delete with the key; the deliveries
	// verify with both schemes and the current secret.
	if r := tn.Do(t, "POST", one+"/test", nil); r.Status != 201 || r.Data()["delivered"] != true {
		t.Fatalf("test: %d %s", r.Status, r.Raw)
	}
	rotated := tn.Do(t, "POST", one+"/rotate-secret", map[string]any{"graceSeconds": 0})
	if rotated.Status != 201 || rotated.Str("secret") == secret || rotated.Str("secret") == "" {
		t.Fatalf("rotate: %d %s", rotated.Status, rotated.Raw)
	}
	if r := tn.Do(t, "POST", one+"/test", nil); r.Status != 201 || r.Data()["delivered"] != true {
		t.Fatalf("test after the rotation: %d %s", r.Status, r.Raw)
	}
	reqs := rcv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d deliveries, want the two tests", len(reqs))
	}
	for i, s := range []string{secret, rotated.Str("secret")} {
		if typ, data := verifyBoth(t, reqs[i], s); typ != "webhook.test" || data["subscriptionId"] != id {
			t.Errorf("delivery %d: %s %v", i, typ, data)
		}
	}
	if r := tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"subscriptionId": id}); len(r.Items()) != 2 {
		t.Errorf("the key's deliveries: %s", r.Raw)
	}
	for _, step := range [][2]string{{"disable", "DISABLED"}, {"enable", "ACTIVE"}} {
		if r := tn.Do(t, "POST", one+"/"+step[0], nil); r.Status != 200 || r.Str("status") != step[1] {
			t.Errorf("%s: %d %s", step[0], r.Status, r.Raw)
		}
	}

	// Another app of the workspace, and another workspace, find nothing of
	// it: not in their list, 404 on every route, and nothing changes.
	for who, other := range map[string]*apitest.Tenant{"another app": sibling, "another workspace": stranger} {
		if r := other.Get(t, ownSubs, nil); r.Status != 200 || len(r.Items()) != 0 {
			t.Errorf("%s lists %s", who, r.Raw)
		}
		for _, call := range []struct {
			method, path string
			body         any
		}{
			{"GET", one, nil}, {"PATCH", one, map[string]any{"url": rcv.URL + "/theirs"}}, {"DELETE", one, nil},
			{"POST", one + "/disable", nil}, {"POST", one + "/enable", nil}, {"POST", one + "/test", nil},
			{"POST", one + "/rotate-secret", nil},
		} {
			apitest.WantError(t, other.Do(t, call.method, call.path, call.body), 404, "NOT_FOUND")
		}
	}
	if r := tn.Get(t, one, nil); r.Str("url") != rcv.URL+"/b" || r.Str("status") != "ACTIVE" ||
		r.Str("secretPrefix") != rotated.Str("secretPrefix") {
		t.Errorf("another's calls changed the subscription: %s", r.Raw)
	}
	if n := len(rcv.Requests()); n != 2 {
		t.Errorf("another's test call delivered: %d requests", n)
	}
	// The other app's own subscriptions stay its own.
	theirs := sibling.Do(t, "POST", ownSubs, map[string]any{"url": rcv.URL + "/c", "events": []string{"*"}})
	if theirs.Status != 201 || theirs.Str("clientId") != sibling.ClientID {
		t.Fatalf("the other app's create: %d %s", theirs.Status, theirs.Raw)
	}
	if r := tn.Get(t, ownSubs, nil); !slices.Equal(r.IDs(), []string{id}) {
		t.Errorf("the app lists another app's subscription: %s", r.Raw)
	}
	apitest.WantError(t, tn.Get(t, ownSubs+"/"+theirs.Str("id"), nil), 404, "NOT_FOUND")

	// webhooks:read reads, and cannot write.
	reader := tn.WithKey(tn.NewKey(t, webhook.ScopeRead))
	if r := reader.Get(t, one, nil); r.Status != 200 {
		t.Errorf("read with webhooks:read: %d %s", r.Status, r.Raw)
	}
	for _, call := range []struct {
		method, path string
		body         any
	}{
		{"POST", ownSubs, map[string]any{"url": rcv.URL, "events": []string{"*"}}},
		{"PATCH", one, map[string]any{"maxPerSecond": 1}}, {"DELETE", one, nil}, {"POST", one + "/test", nil},
		{"POST", one + "/rotate-secret", nil}, {"POST", one + "/disable", nil},
	} {
		apitest.WantError(t, reader.Do(t, call.method, call.path, call.body), 403, "INSUFFICIENT_SCOPE")
	}
	if r := tn.Get(t, ownSubs, nil); len(r.Items()) != 1 || r.Items()[0]["maxPerSecond"] != nil {
		t.Errorf("a read-only key changed something: %s", r.Raw)
	}

	if r := tn.Do(t, "DELETE", one, nil); r.Status != 200 || r.Str("status") != "DISABLED" {
		t.Errorf("delete: %d %s", r.Status, r.Raw)
	}
}

// TestPatchURLIsCheckedAsCreate: a URL the SSRF guard or the HTTPS rule
// refuses at creation is refused by PATCH with the same answer, on the key's
// route and the console's, and the subscription keeps its URL.
func TestPatchURLIsCheckedAsCreate(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	id, _ := tn.Subscribe(t, rcv.URL, "project.created")
	paths := map[string]string{"key": ownSubs + "/" + id, "console": "/openapi/v1/apps/" + tn.ClientID + "/webhooks/" + id}
	for _, bad := range []string{"https://169.254.169.254/latest", "https://10.1.2.3/hook", "https://[fd00::1]/hook",
		"http://hooks.example.com/plain", "https://[::ffff:192.168.0.1]/hook", "not a url"} {
		create := tn.Do(t, "POST", ownSubs, map[string]any{"url": bad, "events": []string{"*"}})
		if create.Status < 400 || create.Status >= 500 {
			t.Fatalf("create with %s: %d %s", bad, create.Status, create.Raw)
		}
		for how, path := range paths {
			var r *apitest.Response
			if how == "key" {
				r = tn.Do(t, "PATCH", path, map[string]any{"url": bad, "maxPerSecond": 3})
			} else {
				r = tn.Console(t, "PATCH", path, map[string]any{"url": bad, "maxPerSecond": 3})
			}
			apitest.WantError(t, r, create.Status, create.ErrorCode())
		}
	}
	if r := tn.Get(t, paths["key"], nil); r.Str("url") != rcv.URL || r.Data()["maxPerSecond"] != nil {
		t.Errorf("a refused PATCH changed the subscription: %s", r.Raw)
	}
}

// TestProjectFilterDeliversOnlyItsProjects: a subscription kept to project A
// gets A's events (a task's status change included, whose data names only
// the task) and events of no project, never B's; with the filter removed it
// gets B's too. Every delivery verifies with both schemes.
func TestProjectFilterDeliversOnlyItsProjects(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	a := tn.CreateProject(t, map[string]any{"name": "A"})["id"].(string)
	b := tn.CreateProject(t, map[string]any{"name": "B"})["id"].(string)
	foreign := env.NewTenant(t).CreateProject(t, map[string]any{"name": "theirs"})["id"].(string)
	// Nothing of the set-up may be waiting when the subscription starts.
	apitest.Eventually(t, apitest.JobWait, "set-up fanned out", func() bool { return len(tn.Events(t)) == 0 })

	for _, bad := range [][]string{{foreign}, {a, "prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0"}} {
		r := tn.Do(t, "POST", ownSubs, map[string]any{"url": rcv.URL, "events": []string{"*"}, "projectIds": bad})
		apitest.WantError(t, r, 400, "VALIDATION_FAILED")
	}
	if r := tn.Get(t, ownSubs, nil); len(r.Items()) != 0 {
		t.Fatalf("a refused create left a subscription: %s", r.Raw)
	}
	created := tn.Do(t, "POST", ownSubs, map[string]any{"url": rcv.URL, "events": []string{"*"},
		"projectIds": []string{a, a}})
	if created.Status != 201 || !slices.Equal(apitest.Strings(created.Data()["projectIds"]), []string{a}) {
		t.Fatalf("create with a filter: %d %s", created.Status, created.Raw)
	}
	id, secret := created.Str("id"), created.Str("secret")
	apitest.WantError(t, tn.Do(t, "PATCH", ownSubs+"/"+id, map[string]any{"projectIds": []string{a, foreign}}),
		400, "VALIDATION_FAILED")

	taskIn := func(prj string) string {
		task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "T"})["id"].(string)
		if r := tn.Do(t, "POST", apitest.TaskBase+"update",
			map[string]any{"taskId": task, "status": "IN_PROGRESS"}); r.Status != 201 {
			t.Fatalf("update: %s", r.Raw)
		}
		return task
	}
	inB := taskIn(b)
	inA := taskIn(a)
	if r := tn.Do(t, "POST", ownSubs+"/"+id+"/test", nil); r.Status != 201 || r.Data()["delivered"] != true {
		t.Fatalf("test: %d %s", r.Status, r.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "every event fanned out", func() bool { return len(tn.Events(t)) == 0 })
	want := []string{"task.created", "task.status_changed", "task.updated", "webhook.test"}
	apitest.Eventually(t, apitest.JobWait, "A's deliveries", func() bool { return len(rcv.Requests()) >= len(want) })
	var got []string
	for _, req := range rcv.Requests() {
		typ, data := verifyBoth(t, req, secret)
		got = append(got, typ)
		if typ == "webhook.test" {
			continue
		}
		if data["projectId"] != nil && data["projectId"] != a || data["taskId"] == inB || data["id"] == inB {
			t.Errorf("%s of another project delivered: %v", typ, data)
		}
		if data["taskId"] != nil && data["taskId"] != inA {
			t.Errorf("%s of an unknown task: %v", typ, data)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}

	// Without the filter, B's changes come too.
	if r := tn.Do(t, "PATCH", ownSubs+"/"+id, map[string]any{"projectIds": nil}); r.Status != 200 ||
		r.Data()["projectIds"] != nil || len(apitest.Strings(r.Data()["events"])) != 1 {
		t.Fatalf("remove the filter: %d %s", r.Status, r.Raw)
	}
	before := len(rcv.Requests())
	taskIn(b)
	apitest.Eventually(t, apitest.JobWait, "B's deliveries", func() bool { return len(rcv.Requests()) >= before+3 })
	for _, req := range rcv.Requests()[before:] {
		if _, data := verifyBoth(t, req, secret); data["projectId"] != nil && data["projectId"] != b {
			t.Errorf("unexpected delivery %v", data)
		}
	}
}

// accessToken is an OAuth access token of tn's app for scopes, obtained by
// the device grant with tn's user approving, as an integration obtains one.
func accessToken(t *testing.T, env *apitest.Env, tn *apitest.Tenant, scopes string) string {
	t.Helper()
	form := func(path string, v url.Values) map[string]any {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/" + path, Body: v.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
		}
		return r.Body
	}
	dc := form("device/code", url.Values{"client_id": {tn.ClientID}, "scope": {scopes}})
	if r := tn.Console(t, "POST", "/openapi/v1/oauth/device/approve",
		map[string]any{"user_code": dc["user_code"], "action": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	tok := form("token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
		"device_code": {dc["device_code"].(string)}, "client_id": {tn.ClientID}})
	return "Bearer " + tok["access_token"].(string)
}

// TestAccessTokenManagesItsAppsSubscriptions: an OAuth access token with
// webhooks:write manages its app's subscriptions as a key does; one with
// webhooks:read only reads them.
func TestAccessTokenManagesItsAppsSubscriptions(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	writer := tn.WithKey(accessToken(t, env, tn, "webhooks:read webhooks:write"))
	created := writer.Do(t, "POST", ownSubs, map[string]any{"url": rcv.URL, "events": []string{"project.created"}})
	if created.Status != 201 || created.Str("clientId") != tn.ClientID {
		t.Fatalf("create with a token: %d %s", created.Status, created.Raw)
	}
	one := ownSubs + "/" + created.Str("id")
	if r := writer.Do(t, "PATCH", one, map[string]any{"events": []string{"task.created"}}); r.Status != 200 ||
		!slices.Equal(apitest.Strings(r.Data()["events"]), []string{"task.created"}) {
		t.Errorf("patch with a token: %d %s", r.Status, r.Raw)
	}
	reader := tn.WithKey(accessToken(t, env, tn, "webhooks:read"))
	if r := reader.Get(t, ownSubs, nil); r.Status != 200 || !slices.Equal(r.IDs(), []string{created.Str("id")}) {
		t.Errorf("list with a read token: %d %s", r.Status, r.Raw)
	}
	apitest.WantError(t, reader.Do(t, "DELETE", one, nil), 403, "INSUFFICIENT_SCOPE")
	if r := writer.Do(t, "DELETE", one, nil); r.Status != 200 || r.Str("status") != "DISABLED" {
		t.Errorf("delete with a token: %d %s", r.Status, r.Raw)
	}
}
