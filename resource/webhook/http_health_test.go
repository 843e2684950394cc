package webhook_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// healthEnv is webhookEnv with a breaker that opens after three failures and
// probes a second later.
func healthEnv(t *testing.T, rcv *apitest.Receiver) (*apitest.Env, *apitest.Tenant) {
	t.Helper()
	sender, err := webhook.NewSender(true, rcv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.New(t, func(d *apitest.Config) { d.WebhookAllowLoopback, d.WebhookSender = true, sender })
	env.StartWorkers(t, func(o *jobs.Options) {
		o.Schedule = []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour, time.Hour}
		o.Breaker = webhook.Breaker{Failures: 3, Cooldown: time.Second, MaxCooldown: time.Second}
		o.PollInterval = 50 * time.Millisecond
	})
	return env, env.NewTenant(t)
}

// probes counts the subscription's live retry jobs that probe an open
// circuit: what the open-circuit gauge counts, per subscription (the gauge
// itself sums the package's every workspace; jobs' own test holds it to this).
func probes(t *testing.T, sub string) int {
	t.Helper()
	id, err := pmapi.ParseID(webhook.SubscriptionPrefix, sub, "subscription")
	if err != nil {
		t.Fatal(err)
	}
	return testdb.RiverCount(t, `select count(*) from river.river_job where kind = 'webhook.retry'
		and args->>'subscriptionId' = $1 and args @> '{"probe": true}'
		and state in ('available', 'scheduled', 'retryable', 'running')`, id.String())
}

// TestTheCircuitBreakerStopsAttemptsUntilAProbeSucceeds: three failures in a
// row open the subscription's circuit (its view says OPEN and since when, and
// its live probe job, which the gauge counts, exists); a delivery made while
// it is open is not attempted and spends none of its attempts; the probe after the cooldown succeeds, the
// circuit closes, and the waiting deliveries follow at once, although their
// retries were an hour away.
func TestTheCircuitBreakerStopsAttemptsUntilAProbeSucceeds(t *testing.T) {
	rcv := apitest.NewReceiver(t, 500, 500, 500, 200)
	env, tn := healthEnv(t, rcv)
	sub, _ := tn.Subscribe(t, rcv.URL, "project.created")
	opened := testutil.ToFloat64(webhook.CircuitTransitions("OPEN"))
	closed := testutil.ToFloat64(webhook.CircuitTransitions("CLOSED"))
	view := func() map[string]any {
		t.Helper()
		for _, it := range tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/webhooks", nil).Items() {
			if it["id"] == sub {
				return it
			}
		}
		t.Fatal("subscription not listed")
		return nil
	}
	if v := view(); v["circuit"] != "CLOSED" || v["circuitOpenedAt"] != nil {
		t.Fatalf("a new subscription: %v", v)
	}
	for i := 1; i <= 3; i++ {
		tn.CreateProject(t, map[string]any{"name": "fails"})
		apitest.Eventually(t, apitest.JobWait, "the failed attempt", func() bool { return len(rcv.Requests()) == i })
	}
	apitest.Eventually(t, apitest.JobWait, "OPEN", func() bool { return view()["circuit"] == "OPEN" })
	if v := view(); v["circuitOpenedAt"] == nil {
		t.Errorf("an open circuit without its time: %v", v)
	}
	if n := probes(t, sub); n != 1 {
		t.Errorf("%d live probe jobs for the open circuit, want 1", n)
	}
	tn.CreateProject(t, map[string]any{"name": "waits"})
	// The probe goes a second after opening (the scheduler may take a few
	// more): then the probe and the four waiting deliveries arrive.
	apitest.Eventually(t, apitest.JobWait, "CLOSED after the probe", func() bool {
		return view()["circuit"] == "CLOSED" && len(tn.Get(t, "/openapi/v1/webhooks/deliveries",
			map[string]string{"status": "SUCCEEDED"}).Items()) == 4
	})
	if n := len(rcv.Requests()); n != 7 {
		t.Errorf("%d requests, want 3 failures and 4 successes: "+
			"nothing was sent while the circuit was open but the probe", n)
	}
	for _, d := range tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items() {
		if d["attempts"].(float64) > 2 {
			t.Errorf("delivery %v spent %v attempts", d["id"], d["attempts"])
		}
	}
	if v := view(); v["circuitOpenedAt"] != nil {
		t.Errorf("a closed circuit keeps its opening time: %v", v)
	}
	if n := probes(t, sub); n != 0 {
		t.Errorf("%d live probe jobs after the circuit closed, want 0", n)
	}
	if testutil.ToFloat64(webhook.CircuitTransitions("OPEN")) <= opened ||
		testutil.ToFloat64(webhook.CircuitTransitions("CLOSED")) <= closed {
		t.Error("the transitions counter did not count the opening and the closing")
	}
	// Every request is in an attempt log, the probe's too, and each in its
	// delivery's row (nothing in webhook_attempts).
	logged := 0
	for _, d := range tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items() {
		_, log := attemptLog(t, tn, d["id"].(string))
		if len(log) != int(d["attempts"].(float64)) {
			t.Errorf("delivery %v made %v attempts and logs %d", d["id"], d["attempts"], len(log))
		}
		logged += len(log)
	}
	if logged != 7 || attemptRows(t, env, tn) != 0 {
		t.Errorf("%d attempts logged in the deliveries' rows, %d in webhook_attempts; want the 7 requests in the rows",
			logged, attemptRows(t, env, tn))
	}
}

// TestMaxPerSecondPacesDeliveries: a subscription capped at 4 a second gets a
// burst's deliveries at least a quarter second apart, all of them; the cap is
// set at creation, changed and removed with PATCH, and checked.
func TestMaxPerSecondPacesDeliveries(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := healthEnv(t, rcv)
	path := "/openapi/v1/apps/" + tn.ClientID + "/webhooks"
	created := tn.Console(t, "POST", path, map[string]any{"url": rcv.URL, "events": []string{"project.created"},
		"maxPerSecond": 4})
	if created.Status != 201 || created.Data()["maxPerSecond"] != float64(4) {
		t.Fatalf("create with a cap: %d %s", created.Status, created.Raw)
	}
	for range 6 {
		tn.CreateProject(t, map[string]any{"name": "burst"})
	}
	apitest.Eventually(t, apitest.JobWait, "six deliveries", func() bool { return len(rcv.Requests()) == 6 })
	times := rcv.Times()
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 240*time.Millisecond {
			t.Errorf("deliveries %d and %d arrived %v apart, under the cap's 250 ms", i, i+1, gap)
		}
	}

	one := path + "/" + created.Str("id")
	if r := tn.Console(t, "PATCH", one, map[string]any{"maxPerSecond": 50}); r.Status != 200 ||
		r.Data()["maxPerSecond"] != float64(50) {
		t.Errorf("raise the cap: %d %s", r.Status, r.Raw)
	}
	if r := tn.Console(t, "PATCH", one, map[string]any{"maxPerSecond": nil}); r.Status != 200 ||
		r.Data()["maxPerSecond"] != nil {
		t.Errorf("remove the cap: %d %s", r.Status, r.Raw)
	}
	for _, bad := range []map[string]any{{"maxPerSecond": 0}, {"maxPerSecond": 1001}, {}} {
		apitest.WantError(t, tn.Console(t, "PATCH", one, bad), 400, "VALIDATION_FAILED")
	}
	apitest.WantError(t, tn.Console(t, "POST", path,
		map[string]any{"url": rcv.URL, "events": []string{"*"}, "maxPerSecond": 0}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, env.NewTenant(t).Console(t, "PATCH", one, map[string]any{"maxPerSecond": 1}),
		404, "NOT_FOUND")
}
