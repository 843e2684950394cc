package tenant_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// raise is a statement failing the way Citus fails one whose shard a
// workspace isolate (a split) removed between planning and execution.
const raise = `do $$ begin
	raise exception using errcode = 'XX000', message = 'could not find valid entry for shard 102212';
end $$`

// TestReadRunsAgainAfterAPlacementMove: a read that meets a Citus placement
// change before any of its results reached the caller is sent again; one
// that cannot be sent again, or keeps meeting it, answers 503.
func TestReadRunsAgainAfterAPlacementMove(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	ws := uuid.New()

	t.Run("the second run answers", func(t *testing.T) {
		var runs, got int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			runs++
			if runs == 1 {
				b.Queue(raise)
			}
			b.Queue("select 7").QueryRow(func(r pgx.Row) error { return r.Scan(&got) })
		})
		if err != nil || runs != 2 || got != 7 {
			t.Fatalf("err %v after %d runs, got %d; want 7 from the second run", err, runs, got)
		}
	})

	t.Run("results already taken: not run again, 503", func(t *testing.T) {
		var runs int
		var taken []int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			runs++
			b.Queue("select 1").QueryRow(func(r pgx.Row) error {
				var v int
				err := r.Scan(&v)
				taken = append(taken, v)
				return err
			})
			b.Queue(raise)
		})
		if runs != 1 || len(taken) != 1 || pmapi.ErrorCode(err) != pmapi.CodeServiceUnavailable {
			t.Fatalf("%d runs, %d results taken, err %v; want one run and SERVICE_UNAVAILABLE", runs, len(taken), err)
		}
	})

	t.Run("still moving after the reruns: 503 keeping the cause", func(t *testing.T) {
		var runs int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) { runs++; b.Queue(raise) })
		var pgErr *pgconn.PgError
		if runs != 3 || pmapi.ErrorCode(err) != pmapi.CodeServiceUnavailable || !errors.As(err, &pgErr) ||
			pgErr.Code != "XX000" {
			t.Fatalf("%d runs, err %v; want 3 runs and SERVICE_UNAVAILABLE wrapping the XX000", runs, err)
		}
	})

	t.Run("other errors are answered at once", func(t *testing.T) {
		var runs int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) { runs++; b.Queue("select 1/0") })
		var pgErr *pgconn.PgError
		if runs != 1 || !errors.As(err, &pgErr) || pgErr.Code != "22012" ||
			pmapi.ErrorCode(err) == pmapi.CodeServiceUnavailable {
			t.Fatalf("%d runs, err %v; want one run and the division by zero", runs, err)
		}
	})
}

// TestTxAnswers503WhileThePlacementKeepsMoving: a transaction that meets
// Citus's placement-change errors on every run (TestTxRunsAgainAfterAConflict
// shows the rerun) answers 503; a missing table of pmapi's own is no move.
func TestTxAnswers503WhileThePlacementKeepsMoving(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	runs := func(pgErr *pgconn.PgError) (int, error) {
		var calls int
		err := shard.Tx(ctx, uuid.New(), func(pgx.Tx) error { calls++; return pgErr })
		return calls, err
	}
	for _, pgErr := range []*pgconn.PgError{
		{Code: "XX000", Message: "could not find valid entry for shard 102212"},
		{Code: "40001", Message: "shard for the given value does not exist"},
		{Code: "42P01", Message: `relation "public.projects_102039" does not exist`},
	} {
		if calls, err := runs(pgErr); calls != 3 || pmapi.ErrorCode(err) != pmapi.CodeServiceUnavailable {
			t.Errorf("%s: err %v after %d calls; want SERVICE_UNAVAILABLE after 3", pgErr.Message, err, calls)
		}
	}
	if calls, err := runs(&pgconn.PgError{Code: "42P01", Message: `relation "tasks" does not exist`}); calls != 1 ||
		pmapi.ErrorCode(err) == pmapi.CodeServiceUnavailable {
		t.Errorf("a missing table of pmapi's own: err %v after %d calls; want the error after one", err, calls)
	}
}
