// Package storetest is what the resource stores' tests share: a workspace of
// their own on the package's test database (internal/testdb), bound as the
// server binds it, with River clients that record events and queue their
// fan-out jobs for real, and an emitter that fails after writing, to show a
// change, its events and their jobs roll back together.
package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/tenant"
)

// Fixture is one test's workspace.
type Fixture struct {
	Shard *tenant.Shard
	WS    uuid.UUID
	// Events records events in the change's transaction and queues their
	// fan-out job (insert-only River clients: nothing works the jobs).
	Events event.Emitter
}

// New makes a workspace named name on the package's database.
func New(t testing.TB, name string) Fixture {
	t.Helper()
	shard := testdb.ServerShard(t)
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		t.Fatal(err)
	}
	dir := tenant.NewDirectory(shards)
	clients, err := jobs.NewClients(dir, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dir.Create(context.Background(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	return Fixture{Shard: shard, WS: w.ID, Events: clients}
}

// Written counts the workspace's events and their fan-out jobs, in the round
// trip of the test's own counts (queue).
func (f Fixture) Written(t testing.TB, queue func(b *pgx.Batch)) (events, jobsQueued int) {
	t.Helper()
	err := f.Shard.Read(context.Background(), f.WS, func(b *pgx.Batch) {
		queue(b)
		b.Queue("select count(*) from events where workspace_id = $1", f.WS).
			QueryRow(func(r pgx.Row) error { return r.Scan(&events) })
		b.Queue(`select count(*) from river.river_job
			where kind = 'event.fanout' and args->>'workspaceId' = $1`, f.WS.String()).
			QueryRow(func(r pgx.Row) error { return r.Scan(&jobsQueued) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, jobsQueued
}

// ErrLate is FailAfterEmit's failure.
var ErrLate = errors.New("failure after the event was written")

// FailAfterEmit records the events for real, then fails with ErrLate: the
// change, its events and their jobs must all roll back together.
type FailAfterEmit struct{ Real event.Emitter }

// Emit writes the events with Real, then fails.
func (f FailAfterEmit) Emit(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws uuid.UUID,
	events ...event.Event,
) error {
	if err := f.Real.Emit(ctx, tx, shard, ws, events...); err != nil {
		return err
	}
	return ErrLate
}
