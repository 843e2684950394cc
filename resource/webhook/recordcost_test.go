package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// attemptRowSQL is how an attempt was recorded before migration 0017: a row
// of its own, whose foreign key is checked against its delivery.
const attemptRowSQL = `insert into webhook_attempts
	(workspace_id, id, delivery_id, attempt, at, outcome, status_code, latency_ms, response_snippet, error,
	delivery_occurred_at) values`

func attemptRow(a Attempt) []any {
	l := a.logged()
	return []any{
		uuid.Must(uuid.NewV7()),
		a.Delivery,
		l.Attempt,
		l.At,
		l.Outcome,
		l.StatusCode,
		l.LatencyMS,
		l.ResponseSnippet,
		l.Error,
		a.OccurredAt,
	}
}

// BenchmarkBackendCPUPerRecordedDelivery is what PostgreSQL's backend spends
// (its own CPU time, from /proc, so other load on the machine changes it
// little) to record one delivery sent at once, as the fan-out does when all
// went well (one batch: the workspace setting and the inserts, committed),
// the way before migration 0017 (the delivery, then its attempt's row) and
// now (the delivery with its attempt log), over an analyzed history of 20,000
// deliveries as a workspace in service has:
//
//	go build -o bin/pmapi ./cmd/pmapi && bin/pmapi devdb exec -- \
//	  go test -run '^$' -bench BackendCPUPerRecordedDelivery -benchtime 5000x ./resource/webhook/
func BenchmarkBackendCPUPerRecordedDelivery(b *testing.B) {
	testdb.SkipOnCitus(b, "one backend's CPU on one machine")
	ctx := context.Background()
	// The workspace as the package's store tests make one: no row of its own.
	f := struct {
		Shard *tenant.Shard
		WS    uuid.UUID
	}{tenant.NewShard("default", testdb.AppPool(b), testdb.TenantSetting(b)), uuid.New()}
	sub := uuid.New()
	if err := f.Shard.Tx(ctx, f.WS, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `insert into webhook_subscriptions
			(workspace_id, id, client_id, url, events, secret_sealed, secret_prefix)
			values ($1, $2, 'app', 'https://example.com/hook', '{*}', '\x00', 'whsec_000000')`, f.WS, sub)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	sent := func() (newDelivery, Attempt) {
		id, now := uuid.Must(uuid.NewV7()), time.Now()
		status := 200
		a := Attempt{
			Delivery:   id,
			OccurredAt: now,
			Number:     1,
			At:         now,
			Result:     Result{Status: status, Latency: 3 * time.Millisecond, Snippet: `{"ok":true}`},
			Verdict:    Verdict{Status: StatusSucceeded},
		}
		d := Delivery{ID: id, SubscriptionID: sub, ClientID: "app", EventID: &id, OccurredAt: &now, EventType: "task.updated",
			Data: []byte(
				`{"id":"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0","status":"DONE"}`,
			), Status: StatusSucceeded, Attempts: 1, LastStatus: &status,
			CompletedAt: &now}
		return newDelivery{Delivery: d, first: &a}, a
	}
	// old records ds the way before 0017, new with their logs.
	old := func(batch *pgx.Batch, ds []newDelivery, as []Attempt) {
		for i := range ds {
			ds[i].first = nil
		}
		queueNewDeliveries(batch, f.WS, ds)
		queueInserts(batch, f.WS, attemptRowSQL, 10, as, attemptRow)
	}
	now := func(batch *pgx.Batch, ds []newDelivery, _ []Attempt) { queueNewDeliveries(batch, f.WS, ds) }

	var history []newDelivery
	var attempts []Attempt
	for range 20_000 {
		d, a := sent()
		history, attempts = append(history, d), append(attempts, a)
	}
	if err := f.Shard.Tx(ctx, f.WS, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		queueNewDeliveries(batch, f.WS, history[:10_000])
		old(batch, history[10_000:], attempts[10_000:])
		return tx.SendBatch(ctx, batch).Close()
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := testdb.OwnerPool(b).Exec(ctx, "analyze webhook_deliveries, webhook_attempts"); err != nil {
		b.Fatal(err)
	}

	for _, step := range []struct {
		name  string
		queue func(batch *pgx.Batch, ds []newDelivery, as []Attempt)
	}{
		{"before 0017: the delivery, then its attempt's row", old},
		{"since 0017: the delivery with its attempt log", now},
		// Again, in the other order: the table grows, autovacuum comes by.
		{"since 0017: the delivery with its attempt log", now},
		{"before 0017: the delivery, then its attempt's row", old},
	} {
		b.Run(step.name, func(b *testing.B) {
			cfg, err := tenant.PoolConfig(testdb.Database(b).AppURL)
			if err != nil {
				b.Fatal(err)
			}
			c, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			record := func() {
				d, a := sent()
				batch := &pgx.Batch{}
				batch.Queue("select set_config('pmapi.workspace_id', $1, true)", f.WS.String())
				step.queue(batch, []newDelivery{d}, []Attempt{a})
				if err := c.SendBatch(ctx, batch).Close(); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 { // prepare and plan-cache warm-up
				record()
			}
			cpu0 := testdb.BackendCPU(b, c)
			for b.Loop() {
				record()
			}
			b.ReportMetric((testdb.BackendCPU(b, c)-cpu0)/float64(b.N)*1e6, "backend-µs/delivery")
		})
	}
}
