package webhook_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/webhook"
)

// rowLog is how many attempts the delivery's own row logs.
func (f fixture) rowLog(t *testing.T, id uuid.UUID) int {
	t.Helper()
	n := -1
	if err := f.shard.Read(f.ctx, f.ws, func(b *pgx.Batch) {
		b.Queue(`select coalesce(jsonb_array_length(attempt_log), 0) from webhook_deliveries
			where workspace_id = $1 and id = $2`, f.ws, id).
			QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAnAttemptOnACancelledDeliveryIsLogged: a retry job's attempt of a
// delivery that was cancelled while it was sent moves nothing (the delivery
// stays CANCELLED) but is in the log: every attempt is logged.
func TestAnAttemptOnACancelledDeliveryIsLogged(t *testing.T) {
	f := newFixture(t)
	sub, del := f.delivery(t)
	f.exec(t, "update webhook_deliveries set status = 'CANCELLED' where workspace_id = $1 and id = $2", f.ws, del)
	sent := []webhook.RetrySent{{
		Delivery: webhook.Delivery{ID: del, SubscriptionID: sub},
		Sent:     webhook.Sent{At: time.Now(), Result: failed},
	}}
	if _, err := f.store.RecordRetry(f.ctx, f.shard, f.ws, sub, 7, sent, false, testSchedule); err != nil {
		t.Fatal(err)
	}
	d, log, err := f.store.Detail(f.ctx, f.shard, f.ws, "app", del)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "CANCELLED" || d.Attempts != 0 || d.LastStatus != nil || len(log) != 1 || log[0].Outcome != "failed" ||
		*log[0].StatusCode != 500 {
		t.Errorf("the cancelled delivery %+v with log %+v; want it CANCELLED as it was, with the attempt logged", d, log)
	}
	if n := f.rowLog(t, del); n != 1 {
		t.Errorf("the row logs %d attempts, want 1", n)
	}
}

// TestATestDeliveryLogsItsAttempt: the synchronous test delivery's attempt is
// in its row's log too.
func TestATestDeliveryLogsItsAttempt(t *testing.T) {
	f := newFixture(t)
	sub, _ := f.delivery(t)
	d, _, err := f.store.NewTestDelivery(f.ctx, f.shard, f.ws, "app", sub)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	if err := f.store.RecordTest(f.ctx, f.shard, f.ws, d, webhook.Sent{At: at, Result: ok204}); err != nil {
		t.Fatal(err)
	}
	d, log, err := f.store.Detail(f.ctx, f.shard, f.ws, "app", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhook.StatusSucceeded || len(log) != 1 ||
		log[0].Attempt != 1 || log[0].Outcome != "succeeded" || !log[0].At.Equal(at.Truncate(time.Microsecond)) ||
		log[0].LatencyMS != 1 || log[0].Error != nil || log[0].ResponseSnippet != nil {
		t.Errorf("test delivery %+v with log %+v", d, log)
	}
	if n := f.rowLog(t, d.ID); n != 1 {
		t.Errorf("the row logs %d attempts, want 1", n)
	}
}
