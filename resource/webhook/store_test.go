package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// fakeJobs hands out job ids from 1001 up and records the retry jobs asked
// for and what it cancels.
type fakeJobs struct {
	next      int64
	retries   []retryJob
	cancelled []int64
}

type retryJob struct {
	id    int64
	sub   uuid.UUID
	at    time.Time
	probe bool
}

func (f *fakeJobs) Retry(
	_ context.Context,
	_ pgx.Tx,
	_ *tenant.Shard,
	_, sub uuid.UUID,
	at time.Time,
	probe bool,
) (int64, error) {
	f.next++
	f.retries = append(f.retries, retryJob{id: 1000 + f.next, sub: sub, at: at, probe: probe})
	return 1000 + f.next, nil
}

func (f *fakeJobs) Cancel(_ context.Context, _ pgx.Tx, _ *tenant.Shard, ids []int64) error {
	f.cancelled = append(f.cancelled, ids...)
	return nil
}

// noEvents drops what the store emits.
type noEvents struct{}

func (noEvents) Emit(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, ...event.Event) error {
	return nil
}

type fixture struct {
	ctx   context.Context
	shard *tenant.Shard
	ws    uuid.UUID
	store webhook.Store
	jobs  *fakeJobs
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	box, err := seal.New(seal.Random())
	if err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{}
	return fixture{
		ctx:   context.Background(),
		shard: tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t)),
		ws:    uuid.New(),
		store: webhook.Store{Events: noEvents{}, Jobs: jobs, Box: box},
		jobs:  jobs,
	}
}

func (f fixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if err := f.shard.Tx(f.ctx, f.ws, func(tx pgx.Tx) error {
		_, err := tx.Exec(f.ctx, sql, args...)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// subscriptions adds n ACTIVE subscriptions to every event of app "app" with
// multi-row VALUES: on Citus an INSERT ... SELECT ships its rows with COPY,
// which row-level security refuses.
func (f fixture) subscriptions(t *testing.T, n int) {
	t.Helper()
	for done := 0; done < n; {
		rows := min(n-done, 500)
		var sql strings.Builder
		sql.WriteString(
			"insert into webhook_subscriptions (workspace_id, id, client_id, url, events, secret_sealed, secret_prefix) values ",
		)
		args := []any{f.ws}
		for i := range rows {
			if i > 0 {
				sql.WriteString(", ")
			}
			args = append(args, uuid.New())
			fmt.Fprintf(&sql, "($1, $%d, 'app', 'https://example.com/hook', '{*}', '\\x00', 'whsec_000000')", len(args))
		}
		f.exec(t, sql.String(), args...)
		done += rows
	}
}

// delivery adds one subscription with one PENDING delivery and returns both.
func (f fixture) delivery(t *testing.T) (sub, del uuid.UUID) {
	t.Helper()
	sub, del = uuid.New(), uuid.New()
	f.exec(t, `insert into webhook_subscriptions (workspace_id, id, client_id, url, events, secret_sealed, secret_prefix)
		values ($1, $2, 'app', 'https://example.com/hook', '{*}', $3, 'whsec_000000')`, f.ws, sub,
		f.store.Box.Seal("whsec_x", seal.Bind("webhook_subscriptions", "secret_sealed", f.ws.String(), sub.String())))
	f.exec(t, `insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_type, data, job_id,
		occurred_at) values ($1, $2, $3, 'app', 'test.ping', '{}', 7, now())`, f.ws, del, sub)
	return sub, del
}

func (f fixture) completedAt(t *testing.T, id uuid.UUID) (status string, at *time.Time) {
	t.Helper()
	err := f.shard.Read(f.ctx, f.ws, func(b *pgx.Batch) {
		b.Queue("select status, completed_at from webhook_deliveries where workspace_id = $1 and id = $2", f.ws, id).
			QueryRow(func(r pgx.Row) error { return r.Scan(&status, &at) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return status, at
}

var failed = webhook.Result{Status: 500, Latency: time.Millisecond, Err: errors.New("endpoint answered 500")}

// TestDisableCancelsAndStampsOnce: disabling cancels the open deliveries with
// their jobs and stamps disabled_at; enabling clears it.
func TestDisableCancelsAndStampsOnce(t *testing.T) {
	f := newFixture(t)
	sub, del := f.delivery(t)
	s, err := f.store.SetStatus(f.ctx, f.shard, f.ws, "app", sub, "DISABLED", "by hand")
	if err != nil || s.Status != "DISABLED" || s.DisabledAt == nil {
		t.Fatalf("disable: %+v, %v", s, err)
	}
	if status, at := f.completedAt(t, del); status != "CANCELLED" || at == nil || len(f.jobs.cancelled) != 1 ||
		f.jobs.cancelled[0] != 7 {
		// 7 is the delivery's own job, queued by a version before retry jobs.
		t.Errorf("the open delivery: %s at %v, jobs cancelled %v", status, at, f.jobs.cancelled)
	}
	if s, err = f.store.SetStatus(f.ctx, f.shard, f.ws, "app", sub, "ACTIVE", ""); err != nil || s.DisabledAt != nil {
		t.Errorf("enable: %+v, %v", s, err)
	}
}

// TestRotateWithAndWithoutGrace: a grace keeps the old secret signing until it
// ends; none drops it at once.
func TestRotateWithAndWithoutGrace(t *testing.T) {
	f := newFixture(t)
	sub, _ := f.delivery(t)
	s, secret, err := f.store.Rotate(f.ctx, f.shard, f.ws, "app", sub, time.Hour)
	if err != nil || s.PreviousValidUntil == nil || time.Until(*s.PreviousValidUntil) < 59*time.Minute {
		t.Fatalf("rotate with an hour's grace: %+v, %v", s, err)
	}
	// The fixture's secret has the old shape; the rotated one has the shape
	// the Standard Webhooks scheme loads.
	if _, ok := webhook.StandardKey(secret); !ok || secret[:12] != s.SecretPrefix {
		t.Errorf("rotated secret %s... is not whsec_ + base64 of 32 bytes", secret[:10])
	}
	if signers, err := f.store.Secrets(s, time.Now()); err != nil || len(signers) != 2 || signers[0] != secret ||
		signers[1] != "whsec_x" {
		t.Errorf("secrets during the grace: %v, %v", signers, err)
	}
	s, secret, err = f.store.Rotate(f.ctx, f.shard, f.ws, "app", sub, 0)
	if err != nil || s.PreviousValidUntil != nil {
		t.Fatalf("rotate without grace: %+v, %v", s, err)
	}
	if signers, err := f.store.Secrets(s, time.Now()); err != nil || len(signers) != 1 || signers[0] != secret {
		t.Errorf("secrets without grace: %v, %v", signers, err)
	}
	if _, _, err := f.store.Rotate(f.ctx, f.shard, f.ws, "other-app", sub, 0); err == nil {
		t.Error("another app rotated the subscription's secret")
	}
}

// TestRecordAndDisableLockInTheSameOrder: a disable holds the subscription and
// then updates its deliveries; a retry job's RecordRetry must not hold a
// delivery while it waits for the subscription, or the two deadlock. The
// disable's steps run by hand here so that RecordRetry can start between
// them.
func TestRecordAndDisableLockInTheSameOrder(t *testing.T) {
	f := newFixture(t)
	sub, del := f.delivery(t)
	pool := testdb.AppPool(t)
	conn, err := pool.Acquire(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx)
	var pid int
	if err := tx.QueryRow(f.ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := testdb.BindWorkspace(t, tx, f.ws.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, "select 1 from webhook_subscriptions where workspace_id = $1 and id = $2 for update",
		f.ws, sub); err != nil {
		t.Fatal(err)
	}

	recorded := make(chan error, 1)
	go func() {
		_, err := f.store.RecordRetry(
			f.ctx,
			f.shard,
			f.ws,
			sub,
			7,
			[]webhook.RetrySent{{Delivery: webhook.Delivery{ID: del, SubscriptionID: sub},
				Sent: webhook.Sent{At: time.Now(), Result: failed}}},
			false,
			testSchedule,
		)
		recorded <- err
	}()
	// Wait until RecordRetry waits for the subscription (or has finished).
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting bool
		if err := pool.QueryRow(f.ctx, "select exists(select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid)))",
			pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting || len(recorded) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// While RecordRetry waits for the subscription, the delivery must be free. This
	// holds even where a deadlock would be retried away.
	err = f.shard.Tx(f.ctx, f.ws, func(probe pgx.Tx) error {
		_, err := probe.Exec(
			f.ctx,
			"select 1 from webhook_deliveries where workspace_id = $1 and id = $2 for no key update nowait",
			f.ws,
			del,
		)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		t.Error("RecordRetry holds the delivery's lock while it waits for the subscription's: a disable deadlocks with it")
	} else if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(
		f.ctx,
		`update webhook_deliveries set status = 'CANCELLED' where workspace_id = $1 and subscription_id = $2
		and status in ('PENDING', 'RETRYING')`,
		f.ws,
		sub,
	)
	if errors.As(err, &pgErr) && pgErr.Code == "40P01" {
		t.Fatal("the disable deadlocked with RecordRetry")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-recorded; err != nil {
		t.Fatalf("RecordRetry: %v", err)
	}
	if status, _ := f.completedAt(t, del); status != "CANCELLED" {
		t.Errorf("the delivery is %s; the disable came first and RecordRetry must not revive it", status)
	}
}
