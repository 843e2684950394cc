package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/internal/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/tenant"
)

// TestCommittedEventsAreFannedOut emits an event in a committed transaction and
// one in a rolled-back one: only the first reaches the fan-out worker.
func TestCommittedEventsAreFannedOut(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	shards, _ := tenant.NewShards("default", shard)
	dir := tenant.NewDirectory(shards)
	w, err := dir.Create(ctx, "fanout", "")
	if err != nil {
		t.Fatal(err)
	}
	clients, err := jobs.NewClients(dir, jobs.Options{Work: true})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := clients.For("default").Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := clients.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer clients.Stop(ctx)

	if err := shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		return clients.Emit(ctx, tx, shard, w.ID, event.Event{Type: "test.kept", Data: map[string]string{"a": "b"}})
	}); err != nil {
		t.Fatal(err)
	}
	_ = shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		if err := clients.Emit(ctx, tx, shard, w.ID, event.Event{Type: "test.dropped", Data: map[string]string{}}); err != nil {
			return err
		}
		return context.Canceled // roll back
	})

	deadline := time.After(20 * time.Second)
	for completed := false; !completed; {
		select {
		case ev := <-done:
			if ev.Job.Kind != "event.fanout" {
				continue
			}
			if ev.Kind == river.EventKindJobFailed {
				t.Fatalf("fan-out failed: %v", ev.Job.Errors)
			}
			completed = true
		case <-deadline:
			t.Fatal("fan-out job did not complete in 20s")
		}
	}
	var kept, dropped int
	var fanned bool
	err = shard.Read(ctx, w.ID, func(b *pgx.Batch) {
		b.Queue("select count(*), bool_and(fanned_out_at is not null) from events where workspace_id = $1 and type = 'test.kept'", w.ID).
			QueryRow(func(r pgx.Row) error { return r.Scan(&kept, &fanned) })
		b.Queue("select count(*) from events where workspace_id = $1 and type = 'test.dropped'", w.ID).
			QueryRow(func(r pgx.Row) error { return r.Scan(&dropped) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if kept != 1 || !fanned || dropped != 0 {
		t.Fatalf("kept=%d fanned=%v dropped=%d; want the committed event fanned out and no rolled-back one", kept, fanned, dropped)
	}
}
