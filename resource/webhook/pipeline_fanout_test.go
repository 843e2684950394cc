package webhook_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/tenant"
)

// TestOneFanoutJobPerTransaction: a transaction's three events queue one
// fan-out job, which delivers all three and consumes them from the outbox,
// and a job queued by an earlier version (one eventId) is still worked.
func TestOneFanoutJobPerTransaction(t *testing.T) {
	ctx := context.Background()
	rcv := apitest.NewReceiver(t)
	ws, shard, emitter := subscribedEmitter(t, rcv)
	fanouts := func() (jobs, events int) {
		t.Helper()
		const where = ` from river.river_job where kind = 'event.fanout' and args->>'workspaceId' = $1`
		return testdb.RiverCount(t, "select count(*)"+where, ws.String()),
			testdb.RiverCount(t, "select coalesce(sum(jsonb_array_length(args->'eventIds')), 0)::int"+where, ws.String())
	}
	jobsBefore, _ := fanouts()
	types := []string{"test.one", "test.two", "test.three"}
	if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var evs []event.Event
		for _, typ := range types {
			evs = append(evs, event.Event{Type: typ, Data: map[string]string{}})
		}
		return emitter.Emit(ctx, tx, shard, ws, evs...)
	}); err != nil {
		t.Fatal(err)
	}
	if n, evs := fanouts(); n != jobsBefore+1 || evs != 3 {
		t.Fatalf("%d fan-out jobs naming %d events for one transaction of three events, want one naming all three",
			n-jobsBefore, evs)
	}
	apitest.Eventually(t, apitest.JobWait, "three deliveries", func() bool { return len(rcv.Requests()) >= 3 })
	var got []string
	for _, r := range rcv.Requests() {
		got = append(got, r.Header.Get("X-Service-Event"))
	}
	slices.Sort(got)
	if want := []string{"test.one", "test.three", "test.two"}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}

	// The receiver has its deliveries before the fan-out's transaction, which
	// records them and consumes the events, commits.
	apitest.Eventually(t, apitest.JobWait, "the outbox emptied by the fan-out", func() bool {
		var left int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			b.Queue("select count(*) from events where workspace_id = $1 and type like 'test.%'",
				ws).QueryRow(func(r pgx.Row) error { return r.Scan(&left) })
		})
		if err != nil {
			t.Fatal(err)
		}
		return left == 0
	})

	if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		id := pmapi.NewID()
		if _, err := tx.Exec(ctx,
			"insert into events (workspace_id, id, type, data) values ($1, $2, 'test.legacy', '{}')", ws,
			id); err != nil {
			return err
		}
		_, err := emitter.For(shard.Name).InsertTx(ctx, tx, jobs.FanoutArgs{WorkspaceID: ws, EventID: id}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, apitest.JobWait, "the legacy job's delivery",
		func() bool { return len(rcv.Requests()) == 4 })
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.Requests()); n != 4 {
		t.Errorf("%d deliveries in all, want 4", n)
	}
}

// subscribedEmitter is emitterFor a workspace with a subscription to every
// event at rcv, with webhookEnv's workers running.
func subscribedEmitter(t *testing.T, rcv *apitest.Receiver) (uuid.UUID, *tenant.Shard, *jobs.Clients) {
	t.Helper()
	env, tn := apitest.WebhookEnv(t, rcv, true)
	return apitest.EmitterFor(t, env, tn, rcv, "*")
}
