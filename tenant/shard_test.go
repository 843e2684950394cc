package tenant_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// roundTrips counts what pgx sends: each Query/Exec and each batch is one round
// trip; a batch with BeginTx also counts once.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// onePool opens a single-connection pool as the server's role, so the next
// statement after a transaction reuses exactly its connection.
func onePool(t *testing.T, tracer *roundTrips) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func currentSetting(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var v *string
	err := pool.QueryRow(context.Background(), "select current_setting('pmapi.workspace_id', true)").Scan(&v)
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return *v
}

func TestTxBindsWorkspaceAndDoesNotLeak(t *testing.T) {
	// Each way into a shard reads the setting from inside.
	ways := []struct {
		name   string
		inside func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (string, error)
	}{
		{"Tx", func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (v string, err error) {
			err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, "select current_setting('pmapi.workspace_id')").Scan(&v)
			})
			return v, err
		}},
		{"Read", func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (v string, err error) {
			err = shard.Read(ctx, ws, func(b *pgx.Batch) {
				b.Queue("select current_setting('pmapi.workspace_id')").QueryRow(func(row pgx.Row) error { return row.Scan(&v) })
			})
			return v, err
		}},
	}
	for _, mode := range []tenant.SettingMode{tenant.SetConfig, tenant.SetLocal} {
		t.Run(modeName(mode), func(t *testing.T) {
			ctx := context.Background()
			pool := onePool(t, nil)
			shard := tenant.NewShard("default", pool, mode)
			ws := uuid.New()
			for _, way := range ways {
				inside, err := way.inside(ctx, shard, ws)
				if err != nil {
					t.Fatal(err)
				}
				if inside != ws.String() {
					t.Errorf("inside %s the setting is %q, want %s", way.name, inside, ws)
				}
				if got := currentSetting(t, pool); got != "" {
					t.Errorf("after %s the pooled connection still carries workspace %q", way.name, got)
				}
			}
		})
	}
}

func modeName(m tenant.SettingMode) string {
	if m == tenant.SetLocal {
		return "set_local"
	}
	return "set_config"
}

func TestReadIsOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	tracer := &roundTrips{}
	pool := onePool(t, tracer)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	// Warm the connection so connecting is not counted.
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	tracer.n.Store(0)
	var a, b int
	ws := uuid.New()
	err := shard.Read(ctx, ws, func(batch *pgx.Batch) {
		batch.Queue("select count(*) from users where workspace_id = $1", ws).
			QueryRow(func(r pgx.Row) error { return r.Scan(&a) })
		batch.Queue("select count(*) from sessions where workspace_id = $1", ws).
			QueryRow(func(r pgx.Row) error { return r.Scan(&b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := tracer.n.Load(); got != 1 {
		t.Errorf("Read with two queries took %d round trips, want 1", got)
	}
}

func TestTxRollsBackOnErrorAndPanic(t *testing.T) {
	ctx := context.Background()
	pool := testdb.AppPool(t)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	ws := uuid.New()
	insert := func(tx pgx.Tx) error {
		_, err := tx.Exec(
			ctx,
			"insert into users (workspace_id, id, email, name) values ($1, $2, 'x@example.com', 'X')",
			ws,
			uuid.New(),
		)
		return err
	}
	boom := errors.New("boom")
	if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if err := insert(tx); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic inside Tx was swallowed")
			}
		}()
		_ = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			if err := insert(tx); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	var n int
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select count(*) from users where workspace_id = $1", ws).
			QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows survived rolled-back transactions", n)
	}
}

// TestUUIDsOverTheWire: ids, nullable ids and id arrays survive a round trip
// through PostgreSQL on a pool from tenant.Connect.
func TestUUIDsOverTheWire(t *testing.T) {
	ctx := context.Background()
	pool, err := tenant.Connect(ctx, testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a, b := uuid.New(), uuid.New()
	var got uuid.UUID
	var some, none *uuid.UUID
	var text string
	var in bool
	err = pool.QueryRow(ctx, "select $1::uuid, $2::uuid, null::uuid, $1::uuid::text, $2::uuid = any($3::uuid[])",
		a, &b, []uuid.UUID{a, b}).
		Scan(&got, &some, &none, &text, &in)
	if err != nil {
		t.Fatal(err)
	}
	if got != a || some == nil || *some != b || none != nil || text != a.String() || !in {
		t.Errorf("got %v %v %v %q %v; want %v %v <nil> %q true", got, some, none, text, in, a, b, a.String())
	}
}
