package webhook_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/resource/webhook"
)

// The attempt log rides in the delivery row (migration 0017): these tests read
// it through the delivery detail, and count what still goes to
// webhook_attempts, the table attempts were kept in before.

// attemptLog is a delivery detail's attemptLog as the server wrote it.
func attemptLog(t *testing.T, tn *apitest.Tenant, id string) (raw string, log []map[string]any) {
	t.Helper()
	r := tn.Get(t, "/openapi/v1/webhooks/deliveries/"+id, nil)
	var body struct {
		Data struct {
			AttemptLog json.RawMessage `json:"attemptLog"`
		} `json:"data"`
	}
	if r.Status != 200 || json.Unmarshal(r.Raw, &body) != nil || json.Unmarshal(body.Data.AttemptLog, &log) != nil {
		t.Fatalf("detail of %s: %d %s", id, r.Status, r.Raw)
	}
	return string(body.Data.AttemptLog), log
}

// attemptRows counts the workspace's rows in webhook_attempts.
func attemptRows(t *testing.T, env *apitest.Env, tn *apitest.Tenant) int {
	t.Helper()
	ws := uuid.MustParse(tn.WorkspaceID)
	n := -1
	if err := env.Directory.Shards().Default.Read(context.Background(), ws, func(b *pgx.Batch) {
		b.Queue("select count(*) from webhook_attempts where workspace_id = $1",
			ws).QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// deliveredOnce waits for the tenant's only delivery to be SUCCEEDED after
// attempts attempts and returns its id.
func deliveredOnce(t *testing.T, tn *apitest.Tenant, attempts int) string {
	t.Helper()
	var id string
	apitest.Eventually(t, apitest.JobWait, "the delivery SUCCEEDED", func() bool {
		items := tn.Get(t, "/openapi/v1/webhooks/deliveries", nil).Items()
		if len(items) == 1 && items[0]["status"] == "SUCCEEDED" && items[0]["attempts"] == float64(attempts) {
			id = items[0]["id"].(string)
		}
		return id != ""
	})
	return id
}

// TestADeliverySentAtOnceIsOneRow: the fan-out's delivery carries its attempt
// in its own row, nothing goes to webhook_attempts, and the detail shows the
// attempt with every member of today's shape, nulls included, in order.
func TestADeliverySentAtOnceIsOneRow(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "at once"})
	id := deliveredOnce(t, tn, 1)
	raw, log := attemptLog(t, tn, id)
	shape := regexp.MustCompile(`^\[\{"attempt":1,"at":"[^"]+","outcome":"succeeded","statusCode":200,` +
		`"latencyMs":[0-9.e+-]+,"responseSnippet":"\{\\"ok\\":true\}","error":null\}\]$`)
	if !shape.MatchString(raw) {
		t.Errorf("attempt log %s", raw)
	}
	if at, err := time.Parse(time.RFC3339Nano, log[0]["at"].(string)); err != nil || time.Since(at) > time.Minute ||
		time.Since(at) < 0 {
		t.Errorf("attempt time %v (%v)", log[0]["at"], err)
	}
	if n := attemptRows(t, env, tn); n != 0 {
		t.Errorf("a delivery sent at once wrote %d rows to webhook_attempts; its attempt belongs in its own row", n)
	}
	apitest.WantError(t, env.NewTenant(t).Get(t, "/openapi/v1/webhooks/deliveries/"+id, nil), 404, "NOT_FOUND")
}

// TestRetriedAndReplayedDeliveriesLogEveryAttempt: a failed attempt and the
// retry that succeeded are both in the log, in order; a replay has a log of
// its own and leaves the original's alone.
func TestRetriedAndReplayedDeliveriesLogEveryAttempt(t *testing.T) {
	rcv := apitest.NewReceiver(t, 500, 200)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "retried"})
	id := deliveredOnce(t, tn, 2)
	_, log := attemptLog(t, tn, id)
	if len(log) != 2 || log[0]["attempt"] != float64(1) || log[0]["outcome"] != "failed" ||
		log[0]["statusCode"] != float64(500) ||
		log[0]["error"] != "endpoint answered 500" || log[1]["attempt"] != float64(2) ||
		log[1]["outcome"] != "succeeded" ||
		log[1]["statusCode"] != float64(200) || log[1]["error"] != nil ||
		log[0]["at"].(string) >= log[1]["at"].(string) {
		t.Fatalf("attempt log %v", log)
	}

	rep := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/"+id+"/replay", nil)
	if rep.Status != 201 {
		t.Fatalf("replay: %d %s", rep.Status, rep.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "the replay SUCCEEDED", func() bool {
		return tn.Get(t, "/openapi/v1/webhooks/deliveries/"+rep.Str("id"), nil).Str("status") == "SUCCEEDED"
	})
	if _, replayed := attemptLog(t, tn, rep.Str("id")); len(replayed) != 1 || replayed[0]["attempt"] != float64(1) ||
		replayed[0]["outcome"] != "succeeded" {
		t.Errorf("the replay's log %v", replayed)
	}
	if _, again := attemptLog(t, tn, id); len(again) != 2 {
		t.Errorf("the original's log changed: %v", again)
	}
	if n := attemptRows(t, env, tn); n != 0 {
		t.Errorf("retries and replays wrote %d rows to webhook_attempts", n)
	}
	apitest.WantError(t, env.NewTenant(t).Get(t, "/openapi/v1/webhooks/deliveries/"+rep.Str("id"), nil),
		404, "NOT_FOUND")
}

// TestAnEndpointsBinaryAnswerIsLogged: an answer with a NUL byte and invalid
// UTF-8 is logged, each replaced by U+FFFD, instead of failing the record of
// the attempt (which would send the delivery again).
func TestAnEndpointsBinaryAnswerIsLogged(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	rcv.SetAnswer([]byte("a\x00b\xff"))
	_, tn := apitest.WebhookEnv(t, rcv, true)
	tn.Subscribe(t, rcv.URL, "project.created")
	tn.CreateProject(t, map[string]any{"name": "binary"})
	id := deliveredOnce(t, tn, 1)
	if _, log := attemptLog(t, tn, id); len(log) != 1 || log[0]["responseSnippet"] != "a\uFFFDb\uFFFD" {
		t.Errorf("attempt log %v", log)
	}
}

// TestDeliveriesFromBeforeTheLogStillShowTheirAttempts: deliveries written the
// old way (attempts in webhook_attempts, no log in the row) show their
// attempts exactly as before, and one still waiting gets its next attempt
// logged in its row, after the old ones.
func TestDeliveriesFromBeforeTheLogStillShowTheirAttempts(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	env, tn := apitest.WebhookEnv(t, rcv, true)
	subID, _ := tn.Subscribe(t, rcv.URL, "project.created")
	sub, err := pmapi.ParseID(webhook.SubscriptionPrefix, subID, "subscription")
	if err != nil {
		t.Fatal(err)
	}
	tn.CreateProject(t, map[string]any{"name": "new"})
	first := deliveredOnce(t, tn, 1)

	ws := uuid.MustParse(tn.WorkspaceID)
	done, waiting := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	t1 := time.Date(2026, 11, 20, 10, 0, 0, 123456000, time.UTC)
	t2, t3 := t1.Add(time.Minute), t1.Add(2*time.Minute)
	ctx := context.Background()
	if err := env.Directory.Shards().Default.Tx(ctx, ws, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_type, data,
				status, attempts, last_status, next_attempt_at, completed_at, occurred_at)
			values ($1, $2, $3, $4, 'project.created', '{}', 'SUCCEEDED', 2, 204, null, $5, now()),
			($1, $6, $3, $4, 'project.created', '{}', 'RETRYING', 1, 503, now() - interval '1 second', null, now())`,
			ws, done, sub, tn.ClientID, t2, waiting)
		// The transaction's now(): the deliveries' event time, which each
		// attempt names with its delivery.
		b.Queue(`insert into webhook_attempts (workspace_id, id, delivery_id, attempt, at, outcome, status_code,
				latency_ms, response_snippet, error, delivery_occurred_at)
			values ($1, $2, $3, 1, $4, 'failed', 500, 12.5, 'oops', 'endpoint answered 500', now()),
			($1, $5, $3, 2, $6, 'succeeded', 204, 3.25, null, null, now()),
			($1, $7, $8, 1, $9, 'failed', 503, 7, null, 'endpoint answered 503', now())`,
			ws, uuid.Must(uuid.NewV7()), done, t1, uuid.Must(uuid.NewV7()), t2, uuid.Must(uuid.NewV7()), waiting, t3)
		return tx.SendBatch(ctx, b).Close()
	}); err != nil {
		t.Fatal(err)
	}
	// As the server writes a time it scanned: in its zone, to the microsecond.
	at := func(tm time.Time) string { return tm.Local().Format(time.RFC3339Nano) }
	want := `[{"attempt":1,"at":"` + at(t1) + `","outcome":"failed","statusCode":500,"latencyMs":12.5,` +
		`"responseSnippet":"oops","error":"endpoint answered 500"},` +
		`{"attempt":2,"at":"` + at(t2) + `","outcome":"succeeded","statusCode":204,"latencyMs":3.25,` +
		`"responseSnippet":null,"error":null}]`
	doneID := pmapi.FormatID(webhook.DeliveryPrefix, done)
	if raw, _ := attemptLog(t, tn, doneID); raw != want {
		t.Errorf("the old delivery's attempt log\n got %s\nwant %s", raw, want)
	}

	// A replay queues the subscription's retry job, which also sends the old
	// delivery that waits.
	if rep := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/"+first+"/replay", nil); rep.Status != 201 {
		t.Fatalf("replay: %d %s", rep.Status, rep.Raw)
	}
	waitingID := pmapi.FormatID(webhook.DeliveryPrefix, waiting)
	apitest.Eventually(t, apitest.JobWait, "the old delivery's retry", func() bool {
		return tn.Get(t, "/openapi/v1/webhooks/deliveries/"+waitingID, nil).Str("status") == "SUCCEEDED"
	})
	_, log := attemptLog(t, tn, waitingID)
	if len(log) != 2 || log[0]["attempt"] != float64(1) || log[0]["statusCode"] != float64(503) ||
		log[0]["at"] != at(t3) ||
		log[1]["attempt"] != float64(2) || log[1]["outcome"] != "succeeded" || log[1]["statusCode"] != float64(200) {
		t.Errorf("the old waiting delivery's log %v", log)
	}
	if n := attemptRows(t, env, tn); n != 3 {
		t.Errorf("webhook_attempts holds %d rows, want the 3 written the old way and no new one", n)
	}
	stranger := env.NewTenant(t)
	for _, id := range []string{doneID, waitingID} {
		apitest.WantError(t, stranger.Get(t, "/openapi/v1/webhooks/deliveries/"+id, nil), 404, "NOT_FOUND")
	}
}
