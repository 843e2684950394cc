package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// TestSweeperRequeuesAnEventWhoseFanoutJobIsGone is the coordinator crash of
// docs/operations.md (Citus) in miniature: an event committed, its fan-out job did not (here:
// deleted before any worker saw it). The sweeper queues the fan-out again and the
// delivery arrives; an event whose job is alive is left to that job, so it is
// delivered once.
func TestSweeperRequeuesAnEventWhoseFanoutJobIsGone(t *testing.T) {
	ctx := context.Background()
	rcv := apitest.NewReceiver(t)
	env := apitest.Reaching(t, rcv, true)
	ws, shard, emitter := apitest.EmitterFor(t, env, env.NewTenant(t), rcv, "*")
	emit := func(typ string) (jobID int64) {
		t.Helper()
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			if err := emitter.Emit(ctx, tx, shard, ws, event.Event{Type: typ, Data: map[string]string{}}); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "select fanout_job_id from events where workspace_id = $1 and type = $2", ws,
				typ).Scan(&jobID)
		})
		if err != nil {
			t.Fatal(err)
		}
		return jobID
	}
	lost := emit("test.lost")
	emit("test.kept")
	// River's tables are on every node on Citus: the job is on the one the
	// transaction ran on.
	if n := testdb.RiverExec(t, "delete from river.river_job where id = $1", lost); n != 1 {
		t.Fatalf("deleted %d jobs of id %d, want the one", n, lost)
	}

	env.StartWorkers(t, func(o *jobs.Options) {
		o.SweepEvery, o.SweepAfter = 300*time.Millisecond, 200*time.Millisecond
	})
	apitest.Eventually(t, apitest.JobWait, "both events delivered", func() bool { return len(rcv.Requests()) >= 2 })
	time.Sleep(time.Second) // a few more sweeps: none may deliver anything again
	seen := map[string]int{}
	for _, r := range rcv.Requests() {
		seen[r.Header.Get("X-Service-Event")]++
	}
	if seen["test.lost"] != 1 || seen["test.kept"] != 1 || len(seen) != 2 {
		t.Fatalf("deliveries by event type %v, want test.lost and test.kept once each", seen)
	}
	// The sweeper queued a fan-out job of its own in place of the lost one,
	// and both events left the outbox.
	var left int
	fanouts := testdb.RiverCount(t, `select count(*) from river.river_job where kind = 'event.fanout'
		and args->>'workspaceId' = $1 and id <> $2`, ws.String(), lost)
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select count(*) from events where workspace_id = $1 and type like 'test.%'",
			ws).QueryRow(func(r pgx.Row) error { return r.Scan(&left) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if fanouts != 2 || left != 0 {
		t.Errorf("%d fan-out jobs besides the lost one (want the kept event's and the sweeper's), %d events left",
			fanouts, left)
	}
}
