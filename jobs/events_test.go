package jobs_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// TestCommittedEventsAreFannedOut emits an event in a committed transaction and
// one in a rolled-back one: only the first is written, and the fan-out worker
// consumes it from the outbox.
func TestCommittedEventsAreFannedOut(t *testing.T) {
	ctx := context.Background()
	dir, shard := testdb.Directory(t)
	w := testdb.Workspace(t, dir, "fanout", "")
	clients, err := jobs.NewClients(dir, jobs.Options{Work: true})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := clients.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	count := func(typ string) (n int) {
		t.Helper()
		if err := shard.Read(ctx, w.ID, func(b *pgx.Batch) {
			b.Queue("select count(*) from events where workspace_id = $1 and type = $2", w.ID, typ).
				QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if err := shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		return clients.Emit(ctx, tx, shard, w.ID, event.Event{Type: "test.kept", Data: map[string]string{"a": "b"}})
	}); err != nil {
		t.Fatal(err)
	}
	_ = shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		dropped := event.Event{Type: "test.dropped", Data: map[string]string{}}
		if err := clients.Emit(ctx, tx, shard, w.ID, dropped); err != nil {
			return err
		}
		return context.Canceled // roll back
	})
	if kept, dropped := count("test.kept"), count("test.dropped"); kept != 1 || dropped != 0 {
		t.Fatalf("kept=%d dropped=%d; want the committed event and no rolled-back one", kept, dropped)
	}
	if err := clients.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer clients.Stop(ctx)

	waitForJob(t, done, "event.fanout")
	if kept := count("test.kept"); kept != 0 {
		t.Fatalf("%d events left after their fan-out; want it consumed", kept)
	}
}
