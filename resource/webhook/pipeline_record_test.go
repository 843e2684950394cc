package webhook_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestSuccessLeavesAHealthySubscriptionUnwritten: a success writes the
// subscription row only to end a failing streak, so deliveries to a healthy
// endpoint never queue for that row's lock; a streak still ends on success.
//
// Not parallel: its workers work every job of the package's database, and a
// fan-out removes its events, which the parallel tests read.
func TestSuccessLeavesAHealthySubscriptionUnwritten(t *testing.T) {
	ctx := context.Background()
	rcv := apitest.NewReceiver(t, 500, 200)
	ws, shard, emitter := subscribedEmitter(t, rcv)
	sub := func() (version string, failing bool, succeeded int) {
		t.Helper()
		err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			b.Queue("select xmin::text, failing_since is not null from webhook_subscriptions where workspace_id = $1",
				ws).
				QueryRow(func(r pgx.Row) error { return r.Scan(&version, &failing) })
			b.Queue("select count(*) from webhook_deliveries where workspace_id = $1 and status = 'SUCCEEDED'", ws).
				QueryRow(func(r pgx.Row) error { return r.Scan(&succeeded) })
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	emit := func() {
		t.Helper()
		if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			return emitter.Emit(ctx, tx, shard, ws, event.Event{Type: "test.ping", Data: map[string]string{}})
		}); err != nil {
			t.Fatal(err)
		}
	}

	// 500, then 200 on the retry: the streak starts and ends.
	emit()
	apitest.Eventually(t, apitest.JobWait, "the retry's success", func() bool { _, _, n := sub(); return n == 1 })
	v1, failing, _ := sub()
	if failing {
		t.Fatal("failing_since still set after a success")
	}
	emit()
	apitest.Eventually(t, apitest.JobWait, "the second success", func() bool { _, _, n := sub(); return n == 2 })
	if v2, _, _ := sub(); v2 != v1 {
		t.Errorf("a success rewrote a healthy subscription (xmin %s, then %s)", v1, v2)
	}
}
