package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

func TestWebhookDeliveryIsSignedAndFiltered(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	_, secret := tn.Subscribe(t, rcv.URL+"/hook", "task.status_changed")
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 6+43 {
		t.Fatalf("secret %q", secret)
	}
	prj := tn.CreateProject(t, map[string]any{"name": "P"})["id"].(string)
	task := tn.CreateTask(t, map[string]any{"projectId": prj,
		"title": "T"})["id"].(string) // task.created: not subscribed
	if r := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": task, "status": "IN_PROGRESS"}); r.Status != 201 {
		t.Fatalf("update: %s", r.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "delivery", func() bool { return len(rcv.Requests()) > 0 })
	time.Sleep(300 * time.Millisecond) // anything else that was going to arrive has arrived
	reqs := rcv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d deliveries, want only task.status_changed", len(reqs))
	}
	got := reqs[0]
	var body struct {
		ID     string         `json:"id"`
		Type   string         `json:"type"`
		Data   map[string]any `json:"data"`
		SentAt time.Time      `json:"sentAt"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Type != "task.status_changed" || body.Data["taskId"] != task || body.Data["from"] != "TODO" ||
		body.Data["to"] != "IN_PROGRESS" ||
		!strings.HasPrefix(body.ID, "evt_") || time.Since(body.SentAt) > time.Minute {
		t.Errorf("body %s", got.Body)
	}
	h := got.Header
	if h.Get("User-Agent") != "pmapi-webhooks/1.0" || h.Get("X-Service-Event") != "task.status_changed" ||
		h.Get("X-Service-Delivery-Id") != body.ID ||
		h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h)
	}
	sig := h.Get("X-Service-Signature")
	if err := stripewebhook.ValidatePayloadWithTolerance(got.Body, sig, secret, 300*time.Second); err != nil {
		t.Errorf("Stripe's verifier refuses the signature %q: %v", sig, err)
	}
	if err := webhook.Verify(sig, got.Body, secret, time.Now()); err != nil {
		t.Errorf("our verifier: %v", err)
	}
	// The Standard Webhooks headers, checked by that scheme's reference library.
	std, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the reference library cannot load a new secret: %v", err)
	}
	if h.Get("webhook-id") != body.ID {
		t.Errorf("webhook-id %q, want the delivery id %s", h.Get("webhook-id"), body.ID)
	}
	if err := std.Verify(got.Body, h); err != nil {
		t.Errorf("the Standard Webhooks library refuses the delivery: %v", err)
	}
	tampered := []byte(strings.Replace(string(got.Body), "IN_PROGRESS", "DONE", 1))
	if std.Verify(tampered, h) == nil ||
		stripewebhook.ValidatePayloadWithTolerance(tampered, sig, secret, 300*time.Second) == nil {
		t.Error("a tampered body verifies")
	}
	// The body is what the document's WebhookBody says, with eventId and
	// occurredAt, and its data what x-webhooks names for the type.
	doc := env.Server.Document()
	var generic map[string]any
	if err := json.Unmarshal(got.Body, &generic); err != nil {
		t.Fatal(err)
	}
	if err := doc.Components.Schemas["WebhookBody"].Value.VisitJSON(generic); err != nil {
		t.Errorf("the body does not match WebhookBody: %v", err)
	}
	if !strings.HasPrefix(fmt.Sprint(generic["eventId"]), "evn_") || generic["occurredAt"] == nil {
		t.Errorf("body without eventId or occurredAt: %s", got.Body)
	}
	ref := api.WebhookPayloadSchema(doc, "task.status_changed")
	if ref == "" || doc.Components.Schemas[ref] == nil {
		t.Fatalf("x-webhooks does not describe task.status_changed's data")
	}
	if err := doc.Components.Schemas[ref].Value.VisitJSON(generic["data"]); err != nil {
		t.Errorf("the data does not match %s: %v", ref, err)
	}
	// The Path Item's body is WebhookBody with the data narrowed.
	if err := doc.Components.Schemas["TaskStatusChangedWebhook"].Value.VisitJSON(generic); err != nil {
		t.Errorf("the body does not match TaskStatusChangedWebhook: %v", err)
	}
	// The delivery is listed for the app, SUCCEEDED after one attempt.
	var list *apitest.Response
	apitest.Eventually(t, apitest.JobWait, "SUCCEEDED", func() bool {
		list = tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"status": "SUCCEEDED"})
		return len(list.Items()) == 1
	})
	if list.Items()[0]["id"] != body.ID || list.Items()[0]["attempts"] != float64(1) {
		t.Errorf("list %s", list.Raw)
	}
}

func TestWebhookRetriesUntilDeadThenReplay(t *testing.T) {
	rcv := apitest.NewReceiver(t, 500)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	sub, _ := tn.Subscribe(t, rcv.URL, "*")
	failedBefore := testutil.ToFloat64(jobs.DeliveryAttempts("failed"))
	deadBefore := testutil.ToFloat64(jobs.DeadDeliveries())
	tn.CreateProject(t, map[string]any{"name": "fails"})
	var d map[string]any
	apitest.Eventually(t, apitest.JobWait, "DEAD", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"subscriptionId": sub}).Items()
		if len(items) == 0 {
			return false
		}
		d = items[0]
		return d["status"] == "DEAD"
	})
	if d["attempts"] != float64(6) || len(rcv.Requests()) != 6 {
		t.Fatalf("DEAD after %v attempts, %d requests; want 6", d["attempts"], len(rcv.Requests()))
	}
	detail := tn.Get(t, "/openapi/v1/webhooks/deliveries/"+d["id"].(string), nil)
	log := detail.Data()["attemptLog"].([]any)
	if len(log) != 6 || log[5].(map[string]any)["statusCode"] != float64(500) ||
		log[0].(map[string]any)["responseSnippet"] != `{"ok":true}` {
		t.Fatalf("attempt log %s", detail.Raw)
	}
	if got := testutil.ToFloat64(jobs.DeliveryAttempts("failed")) - failedBefore; got < 6 {
		t.Errorf("failed attempts counter rose by %v, want at least 6", got)
	}
	if got := testutil.ToFloat64(jobs.DeadDeliveries()) - deadBefore; got < 1 {
		t.Errorf("dead counter rose by %v", got)
	}

	rcv.SetStatuses(200)
	rep := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/"+d["id"].(string)+"/replay", nil)
	if rep.Status != 201 || rep.Str("replayOf") != d["id"] || rep.Str("id") == d["id"] {
		t.Fatalf("replay: %d %s", rep.Status, rep.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "replay delivered", func() bool {
		return tn.Get(t, "/openapi/v1/webhooks/deliveries/"+rep.Str("id"), nil).Str("status") == "SUCCEEDED"
	})
	var body map[string]any
	_ = json.Unmarshal(rcv.Requests()[0].Body, &body)
	if body["id"] != rep.Str("id") || body["type"] != "project.created" {
		t.Errorf("replayed body %v", body)
	}
	if again := tn.Get(t, "/openapi/v1/webhooks/deliveries/"+d["id"].(string),
		nil); len(again.Data()["attemptLog"].([]any)) != 6 || again.Str("status") != "DEAD" {
		t.Errorf("the original's log changed: %s", again.Raw)
	}
}

func TestWebhookSucceedsOnTheThirdAttempt(t *testing.T) {
	rcv := apitest.NewReceiver(t, 503, 502, 204)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "x"})
	apitest.Eventually(t, apitest.JobWait, "SUCCEEDED", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items()
		return len(items) == 1 && items[0]["status"] == "SUCCEEDED" && items[0]["attempts"] == float64(3)
	})
	reqs := rcv.Requests()
	if len(reqs) != 3 || reqs[0].Header.Get("X-Service-Delivery-Id") != reqs[2].Header.Get("X-Service-Delivery-Id") {
		t.Errorf("a delivery keeps its id through retries: %d requests", len(reqs))
	}
}

func TestDeletedSubscriptionGetsNothingMore(t *testing.T) {
	rcv := apitest.NewReceiver(t, 500)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	_ = env
	sub, secret := tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "a"})
	apitest.Eventually(t, apitest.JobWait, "first attempt", func() bool { return len(rcv.Requests()) >= 1 })
	del := tn.Console(t, "DELETE", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub, nil)
	if del.Status != 200 || del.Str("status") != "DISABLED" {
		t.Fatalf("delete: %d %s", del.Status, del.Raw)
	}
	n := len(rcv.Requests())
	tn.CreateProject(t, map[string]any{"name": "b"})
	time.Sleep(1500 * time.Millisecond)
	if got := len(rcv.Requests()); got != n {
		t.Fatalf("%d more requests after the subscription was deleted", got-n)
	}
	items := tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"subscriptionId": sub}).Items()
	if len(items) != 1 || items[0]["status"] != "CANCELLED" {
		t.Errorf("deliveries after delete: %v", items)
	}
	list := tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks", nil)
	if len(list.Items()) != 1 || list.Items()[0]["status"] != "DISABLED" ||
		strings.Contains(string(list.Raw), secret) {
		t.Errorf("the row is kept, DISABLED, without secrets: %s", list.Raw)
	}
}

// failingEndpoint subscribes a receiver answering status to project.created,
// and a watcher to webhook.disabled: events leave the outbox once fanned out,
// so a second endpoint is where the disable is heard of.
func failingEndpoint(t *testing.T, status int) (tn *apitest.Tenant, rcv *apitest.Receiver, sub string,
	watcher *apitest.Receiver) {
	t.Helper()
	rcv = apitest.NewReceiver(t, status)
	_, tn = apitest.WebhookEnv(t, rcv, true)
	sub, _ = tn.Subscribe(t, rcv.URL, "project.created")
	watcher = apitest.NewReceiver(t)
	tn.Subscribe(t, watcher.URL, "webhook.disabled")
	return tn, rcv, sub, watcher
}

func TestGoneDisablesAtOnceAndRedirectsAreFailures(t *testing.T) {
	tn, rcv, sub, watcher := failingEndpoint(t, 410)
	tn.CreateProject(t, map[string]any{"name": "gone"})
	apitest.Eventually(t, apitest.JobWait, "disabled on 410", func() bool {
		for _, it := range tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks", nil).Items() {
			if it["id"] == sub && it["status"] == "DISABLED" {
				return true
			}
		}
		return false
	})
	apitest.Eventually(t, apitest.JobWait, "webhook.disabled delivered",
		func() bool { return len(watcher.Requests()) == 1 })
	if b := bodies(t, watcher); b[0].Type != "webhook.disabled" ||
		b[0].Data["reason"] != "the endpoint answered 410 Gone" || len(rcv.Requests()) != 1 {
		t.Errorf("410: disabled event %+v, %d requests", b[0], len(rcv.Requests()))
	}

	redirect := apitest.NewReceiver(t, 302)
	env2, tn2 := apitest.WebhookEnv(t, redirect, true)
	_ = env2
	tn2.Subscribe(t, redirect.URL, "project.created")
	test := tn2.Console(t, "POST", "/openapi/v1/apps/"+tn2.ClientID+"/webhooks/"+tn2List(t, tn2)+"/test", nil)
	if test.Status != 201 || test.Data()["delivered"] != false || test.Data()["status"] != float64(302) ||
		len(redirect.Requests()) != 1 {
		t.Fatalf("a redirect must be a failure and never followed: %s, %d requests", test.Raw,
			len(redirect.Requests()))
	}
}

func tn2List(t *testing.T, tn *apitest.Tenant) string {
	return tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks", nil).Items()[0]["id"].(string)
}

func TestWebhookTestEndpointAndSecretRotation(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	sub, oldSecret := tn.Subscribe(t, rcv.URL, "*")
	test := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/test", nil)
	if test.Status != 201 || test.Data()["delivered"] != true || test.Data()["status"] != float64(200) {
		t.Fatalf("test: %s", test.Raw)
	}
	var body map[string]any
	_ = json.Unmarshal(rcv.Requests()[0].Body, &body)
	if body["type"] != "webhook.test" {
		t.Errorf("test body %v", body)
	}
	rot := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/rotate-secret",
		map[string]any{"graceSeconds": 3600})
	newSecret := rot.Str("secret")
	if rot.Status != 201 || newSecret == oldSecret || rot.Data()["previousValidUntil"] == nil {
		t.Fatalf("rotate: %s", rot.Raw)
	}
	rcv.SetStatuses(200)
	tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/test", nil)
	got := rcv.Requests()[0]
	sig := got.Header.Get("X-Service-Signature")
	if strings.Count(sig, "v1=") != 2 {
		t.Fatalf("during the grace both secrets sign: %q", sig)
	}
	for _, s := range []string{oldSecret, newSecret} {
		if err := webhook.Verify(sig, got.Body, s, time.Now()); err != nil {
			t.Errorf("verify with %s...: %v", s[:10], err)
		}
		if err := stripewebhook.ValidatePayloadWithTolerance(got.Body, sig, s, 300*time.Second); err != nil {
			t.Errorf("stripe verify with %s...: %v", s[:10], err)
		}
		std, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatalf("the reference library cannot load %s...: %v", s[:10], err)
		}
		if err := std.Verify(got.Body, got.Header); err != nil {
			t.Errorf("Standard Webhooks verify with %s...: %v", s[:10], err)
		}
	}
	// Without graceSeconds the old secret keeps signing for 24 h; a grace
	// beyond a week is refused.
	def := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/rotate-secret", nil)
	until, err := time.Parse(time.RFC3339Nano, def.Str("previousValidUntil"))
	if def.Status != 201 || err != nil || until.Sub(time.Now().Add(24*time.Hour)).Abs() > time.Minute {
		t.Errorf("default grace: %s", def.Raw)
	}
	apitest.WantError(t, tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/rotate-secret",
		map[string]any{"graceSeconds": 8 * 24 * 3600}), 400, "VALIDATION_FAILED")
}

func TestWebhookSSRFGuard(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	// Creation: no loopback switch here.
	env := apitest.New(t)
	tn := env.NewTenant(t)
	for url, code := range map[string]string{
		"http://example.com/hook":           "INVALID_WEBHOOK_URL",
		rcv.URL:                             "URL_NOT_ALLOWED",
		"https://10.0.0.8/hook":             "URL_NOT_ALLOWED",
		"https://192.168.1.20/hook":         "URL_NOT_ALLOWED",
		"https://169.254.169.254/latest/":   "URL_NOT_ALLOWED",
		"https://[::1]/hook":                "URL_NOT_ALLOWED",
		"https://[::ffff:10.0.0.1]/hook":    "URL_NOT_ALLOWED",
		"https://[64:ff9b::a9fe:a9fe]/hook": "URL_NOT_ALLOWED",
		"https://[2002:c0a8:101::1]/hook":   "URL_NOT_ALLOWED",
		"https://100.64.0.1/hook":           "URL_NOT_ALLOWED",
		"https://localhost/hook":            "URL_NOT_ALLOWED",
	} {
		r := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks",
			map[string]any{"url": url, "events": []string{"*"}})
		apitest.WantError(t, r, 400, code)
	}
	apitest.WantError(t, tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks",
		map[string]any{"url": "https://example.com", "events": []string{"task.exploded"}}), 400, "VALIDATION_FAILED")

	// Dial time: the subscription was accepted (loopback allowed at creation),
	// but the sender refuses the address when it connects.
	blockedBefore := testutil.ToFloat64(jobs.DeliveryAttempts("blocked"))
	_, tn2 := apitest.WebhookEnv(t, rcv, false)
	sub, _ := tn2.Subscribe(t, rcv.URL, "*")
	test := tn2.Console(t, "POST", "/openapi/v1/apps/"+tn2.ClientID+"/webhooks/"+sub+"/test", nil)
	if test.Data()["delivered"] != false || len(rcv.Requests()) != 0 ||
		!strings.Contains(test.Str("error"), "not allowed") {
		t.Fatalf("dial-time guard: %s, %d requests", test.Raw, len(rcv.Requests()))
	}
	if testutil.ToFloat64(jobs.DeliveryAttempts("blocked")) <= blockedBefore {
		t.Error("blocked counter did not rise")
	}
	// A real delivery through River: the attempt fails as blocked and is logged so.
	tn2.CreateProject(t, map[string]any{"name": "blocked"})
	var attempt map[string]any
	apitest.Eventually(t, apitest.JobWait, "blocked attempt logged", func() bool {
		items := tn2.Get(t, "/openapi/v1/webhooks/deliveries",
			map[string]string{"eventType": "project.created"}).Items()
		if len(items) == 0 {
			return false
		}
		log, _ := tn2.Get(t, "/openapi/v1/webhooks/deliveries/"+items[0]["id"].(string),
			nil).Data()["attemptLog"].([]any)
		if len(log) == 0 {
			return false
		}
		attempt = log[0].(map[string]any)
		return true
	})
	if attempt["outcome"] != "blocked" || !strings.Contains(fmt.Sprint(attempt["error"]), "not allowed") ||
		attempt["statusCode"] != nil || len(rcv.Requests()) != 0 {
		t.Errorf("blocked delivery attempt %v, %d requests reached the receiver", attempt, len(rcv.Requests()))
	}
}

func TestDeliveriesAreTheCallingAppsOnly(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "x"})
	var id string
	apitest.Eventually(t, apitest.JobWait, "delivery", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items()
		if len(items) == 1 {
			id = items[0]["id"].(string)
		}
		return id != ""
	})
	// Another app of the same workspace, and another workspace.
	otherApp := tn.Console(t, "POST", "/openapi/v1/apps",
		map[string]any{"workspaceId": tn.WorkspaceID, "name": "other", "scopes": apitest.AllScopes})
	key := tn.Console(t, "POST", "/openapi/v1/apps/"+otherApp.Str("clientId")+"/keys",
		map[string]any{"scopes": apitest.AllScopes}).Str("apiKey")
	sibling := *tn
	sibling.ClientID, sibling.Key = otherApp.Str("clientId"), key
	stranger := env.NewTenant(t)
	for _, who := range []*apitest.Tenant{&sibling, stranger} {
		if items := who.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items(); len(items) != 0 {
			t.Errorf("another app sees %d deliveries", len(items))
		}
		apitest.WantError(t, who.Get(t, "/openapi/v1/webhooks/deliveries/"+id, nil), 404, "NOT_FOUND")
		apitest.WantError(t, who.Do(t, "POST", "/openapi/v1/webhooks/deliveries/"+id+"/replay", nil), 404, "NOT_FOUND")
	}
	apitest.WantError(t, tn.WithKey(tn.NewKey(t, "webhooks:read")).Do(t, "POST",
		"/openapi/v1/webhooks/deliveries/"+id+"/replay", nil), 403, "INSUFFICIENT_SCOPE")
	apitest.WantError(t, tn.WithKey(tn.NewKey(t, "tasks:read")).Get(t, "/openapi/v1/webhooks/deliveries", nil),
		403, "INSUFFICIENT_SCOPE")
	// Another workspace's console cannot see or change the subscriptions.
	apitest.WantError(t, stranger.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks", nil),
		404, "NOT_FOUND")
	// The subscribing app is disabled by a delete, not removed: its deliveries
	// and their log outlive the call (the webhook-only branch is in api/apps_test.go).
	del := tn.Console(t, "DELETE", "/openapi/v1/apps/"+tn.ClientID, nil)
	if del.Status != 200 || del.Data()["deleted"] != false || del.Str("status") != "DISABLED" {
		t.Errorf("deleting the subscribing app: %d %s", del.Status, del.Raw)
	}
	if r := tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID, nil); r.Status != 200 ||
		r.Str("status") != "DISABLED" {
		t.Errorf("the disabled app: %d %s", r.Status, r.Raw)
	}
}

func TestFailingForFiveDaysDisablesAndBulkReplayRecovers(t *testing.T) {
	tn, rcv, sub, watcher := failingEndpoint(t, 500)
	tn.CreateProject(t, map[string]any{"name": "one"})
	apitest.Eventually(t, apitest.JobWait, "first delivery dead", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items()
		return len(items) == 1 && items[0]["status"] == "DEAD"
	})
	// The subscription has been failing for six days: the next failure disables it.
	if err := tn.ExecAsServer(t,
		"update webhook_subscriptions set failing_since = now() - interval '6 days'"); err != nil {
		t.Fatal(err)
	}
	tn.CreateProject(t, map[string]any{"name": "two"})
	apitest.Eventually(t, apitest.JobWait, "auto-disabled", func() bool {
		return tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks",
			nil).Items()[0]["status"] == "DISABLED"
	})
	apitest.Eventually(t, apitest.JobWait, "webhook.disabled delivered",
		func() bool { return len(watcher.Requests()) == 1 })
	if ev := bodies(t, watcher); ev[0].Data["reason"] != "every delivery failed for 5 days" {
		t.Fatalf("webhook.disabled events %+v", ev)
	}
	// Bulk recovery: enable, then replay everything that failed since an hour ago.
	rcv.SetStatuses(200)
	tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+sub+"/enable", nil)
	rep := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/replay",
		map[string]any{"subscriptionId": sub, "since": time.Now().Add(-time.Hour).Format(time.RFC3339)})
	if rep.Status != 201 || rep.Data()["count"] != float64(2) {
		t.Fatalf("bulk replay: %d %s", rep.Status, rep.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "replays delivered", func() bool {
		return len(tn.Get(t, "/openapi/v1/webhooks/deliveries",
			map[string]string{"status": "SUCCEEDED", "subscriptionId": sub}).Items()) == 2
	})
}

// TestDeliveryListFiltersPagesAndDisable covers the delivery list's filters
// (subscriptionId, status, eventType, since) and keyset pages, and the disable
// endpoint: a disabled subscription gets no new deliveries until enabled.
func TestDeliveryListFiltersPagesAndDisable(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	projects, _ := tn.Subscribe(t, rcv.URL, "project.created")
	tasks, _ := tn.Subscribe(t, rcv.URL, "task.created")
	prj := tn.CreateProject(t, map[string]any{"name": "one"})["id"].(string)
	tn.CreateProject(t, map[string]any{"name": "two"})
	tn.CreateTask(t, map[string]any{"projectId": prj, "title": "t"})
	apitest.Eventually(t, apitest.JobWait, "three deliveries SUCCEEDED", func() bool {
		return len(tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"status": "SUCCEEDED"}).Items()) == 3
	})
	count := func(q map[string]string) int {
		t.Helper()
		r := tn.Get(t, "/openapi/v1/webhooks/deliveries", q)
		if r.Status != 200 {
			t.Fatalf("list %v: %d %s", q, r.Status, r.Raw)
		}
		return len(r.Items())
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		q    map[string]string
		want int
	}{
		{map[string]string{"subscriptionId": projects}, 2},
		{map[string]string{"subscriptionId": tasks}, 1},
		{map[string]string{"eventType": "task.created"}, 1},
		{map[string]string{"eventType": "project.created"}, 2},
		{map[string]string{"eventType": "risk.opened"}, 0},
		{map[string]string{"status": "DEAD"}, 0},
		{map[string]string{"since": past}, 3},
		{map[string]string{"since": future}, 0},
	} {
		if got := count(tc.q); got != tc.want {
			t.Errorf("%v: %d deliveries, want %d", tc.q, got, tc.want)
		}
	}
	for _, bad := range []map[string]string{{"status": "LOST"}, {"since": "yesterday"}, {"subscriptionId": "x"}} {
		apitest.WantError(t, tn.Get(t, "/openapi/v1/webhooks/deliveries", bad), 400, "VALIDATION_FAILED")
	}
	// Keyset pages of one visit each delivery once.
	seen := map[string]bool{}
	q := map[string]string{"limit": "1"}
	for i := 0; i < 5; i++ {
		r := tn.Get(t, "/openapi/v1/webhooks/deliveries", q)
		for _, id := range r.IDs() {
			if seen[id] {
				t.Errorf("%s on two pages", id)
			}
			seen[id] = true
		}
		next, ok := r.Data()["nextCursor"].(string)
		if !ok {
			break
		}
		q["cursor"] = next
	}
	if len(seen) != 3 {
		t.Errorf("pages visited %d deliveries, want 3", len(seen))
	}

	// Disable: nothing new is delivered; enable: deliveries resume.
	dis := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+projects+"/disable", nil)
	if dis.Status != 200 || dis.Str("status") != "DISABLED" {
		t.Fatalf("disable: %d %s", dis.Status, dis.Raw)
	}
	tn.CreateProject(t, map[string]any{"name": "while disabled"})
	time.Sleep(1500 * time.Millisecond)
	if got := count(map[string]string{"subscriptionId": projects}); got != 2 {
		t.Errorf("a disabled subscription got a delivery: %d", got)
	}
	if en := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+projects+"/enable",
		nil); en.Status != 200 || en.Str("status") != "ACTIVE" {
		t.Fatalf("enable: %d %s", en.Status, en.Raw)
	}
	tn.CreateProject(t, map[string]any{"name": "after enable"})
	apitest.Eventually(t, apitest.JobWait, "delivery after enable", func() bool {
		return count(map[string]string{"subscriptionId": projects, "status": "SUCCEEDED"}) == 3
	})
	stranger := env.NewTenant(t)
	apitest.WantError(t, stranger.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks/"+projects+"/disable",
		nil), 404, "NOT_FOUND")
}

// TestRetryingDeliveryShowsNextAttempt: after a failed first attempt the
// delivery is RETRYING with one attempt and its next attempt at the schedule's
// first step (1 h here), which River holds as the job's scheduled time.
func TestRetryingDeliveryShowsNextAttempt(t *testing.T) {
	rcv := apitest.NewReceiver(t, 500)
	env := apitest.Reaching(t, rcv, true)
	env.StartWorkers(t, func(o *jobs.Options) {
		o.Schedule = []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour, time.Hour}
	})
	tn := env.NewTenant(t)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "x"})
	var d map[string]any
	apitest.Eventually(t, apitest.JobWait, "RETRYING", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"status": "RETRYING"}).Items()
		if len(items) == 1 {
			d = items[0]
		}
		return d != nil
	})
	next, err := time.Parse(time.RFC3339Nano, fmt.Sprint(d["nextAttemptAt"]))
	if err != nil || d["attempts"] != float64(1) || next.Sub(time.Now().Add(time.Hour)).Abs() > time.Minute {
		t.Errorf("retrying delivery %v: want 1 attempt and the next in 1 h", d)
	}
	if n := len(rcv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 before the retry is due", n)
	}
	// The queue gauges see the waiting retry; a delivery job waiting for ten
	// minutes (on a queue no worker serves, so nothing races the reading) shows
	// in the oldest-pending age.
	gauges := func() (depth, lag float64) {
		t.Helper()
		reg := prometheus.NewRegistry()
		reg.MustRegister(jobs.QueueGauges{Directory: env.Directory})
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "pmapi_webhook_queue_depth":
				depth = mf.GetMetric()[0].GetGauge().GetValue()
			case "pmapi_webhook_oldest_pending_age_seconds":
				lag = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return depth, lag
	}
	if depth, _ := gauges(); depth < 1 {
		t.Errorf("queue depth %v with a delivery waiting", depth)
	}
	if err := tn.ExecAsServer(t,
		`insert into river.river_job (kind, args, queue, state, scheduled_at, max_attempts, priority)
		values ('webhook.deliver', '{}', 'audit-unserved', 'available', now() - interval '10 minutes',
			1, 1)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.ExecAsServer(t, "delete from river.river_job where queue = 'audit-unserved'") })
	if _, lag := gauges(); lag < 590 || lag > 900 {
		t.Errorf("oldest pending age %vs, want about 600", lag)
	}
}
