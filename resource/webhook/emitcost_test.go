package webhook_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// sentCounter counts what pgx sends: each Query or Exec is one statement and
// one round trip, each batch one round trip of its statements.
type sentCounter struct{ statements, roundTrips atomic.Int64 }

func (c *sentCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.statements.Add(1)
	c.roundTrips.Add(1)
	return ctx
}
func (c *sentCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *sentCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}
func (c *sentCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.statements.Add(1)
}
func (c *sentCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestEmitIsOneStatement: writing a transaction's events to the outbox and to
// the log, with their numbers, is one statement in one round trip, as the
// outbox's insert alone was (docs/decisions/event-feed.md): the log costs a
// write no statement and no round trip.
func TestEmitIsOneStatement(t *testing.T) {
	t.Parallel()
	counter := &sentCounter{}
	cfg, err := tenant.PoolConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	ws := pmapi.NewID()
	for _, n := range []int{1, 3, 1} {
		events := make([]webhook.Outgoing, n)
		for i := range events {
			events[i] = webhook.Outgoing{ID: pmapi.NewID(), Type: "task.updated", Data: []byte(`{"id": "tsk_x"}`)}
		}
		var statements, roundTrips int64
		err := shard.Tx(context.Background(), ws, func(tx pgx.Tx) error {
			s0, r0 := counter.statements.Load(), counter.roundTrips.Load()
			err := webhook.InsertOutbox(context.Background(), tx, ws, 0, events)
			statements, roundTrips = counter.statements.Load()-s0, counter.roundTrips.Load()-r0
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if statements != 1 || roundTrips != 1 {
			t.Errorf("emitting %d events sent %d statements in %d round trips, want 1 in 1", n, statements, roundTrips)
		}
	}
}
