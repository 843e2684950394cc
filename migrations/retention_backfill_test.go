package migrations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// TestRetentionPartitionsKeepEveryRow: migration 0025 moves the rows of a
// database at 0024 into the partitioned tables, every value kept (a delivery
// from before 0013 takes its created_at as its event's time), and the server's
// statements work on them afterwards: the log numbers on from its last event,
// a delivery is written, moved and read with its attempts, another workspace
// sees none of it. The store's feed and delivery detail read them.
func TestRetentionPartitionsKeepEveryRow(t *testing.T) {
	ctx := context.Background()
	admin := testdb.AdminURL(t)
	name := fmt.Sprintf("pmapi_rp_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := pgcluster.CreateDatabase(ctx, admin, name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pgcluster.DropDatabase(context.Background(), admin, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	if err := migrations.ApplyThrough(ctx, db.OwnerURL, 24); err != nil {
		t.Fatal(err)
	}
	owner := testdb.Conn(t, db.OwnerURL)
	app := testdb.Conn(t, db.AppURL)
	ws, sub := uuid.New(), uuid.New()
	old, bare, fresh, attempt := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	oldAt := time.Now().Add(-40 * 24 * time.Hour).Truncate(time.Microsecond)
	bareAt := time.Now().Add(-3 * 24 * time.Hour).Truncate(time.Microsecond)
	exec := func(tx pgx.Tx, sql string, args ...any) error {
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
		return nil
	}
	err = testdb.InWorkspace(t, owner, ws.String(), func(tx pgx.Tx) error {
		return exec(tx, "insert into workspaces (id, name, console_client_id) values ($1, 'w', $2)", ws, ws.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	err = testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
		if err := exec(tx, `insert into webhook_subscriptions (workspace_id, id, client_id, url, events, secret_sealed,
			secret_prefix) values ($1, $2, 'app', 'https://example.com/h', '{task.created}', '\x00', 'whsec_')`,
			ws, sub); err != nil {
			return err
		}
		for i := range 3 {
			ids := []uuid.UUID{uuid.New()}
			if err := exec(tx, "select pmapi_emit_events($1, $2, $3, '{task.created}', $4)", ws, int64(i), ids,
				[]string{fmt.Sprintf(`{"n": %d}`, i)}); err != nil {
				return err
			}
		}
		if err := exec(tx, `insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id,
			occurred_at, event_type, data, status, created_at) values
			($1, $2, $3, 'app', $2, $4, 'task.created', '{}', 'SUCCEEDED', $4),
			($1, $5, $3, 'app', null, null, 'task.created', '{}', 'DEAD', $6),
			($1, $7, $3, 'app', $7, now(), 'task.created', '{}', 'PENDING', now())`,
			ws, old, sub, oldAt, bare, bareAt, fresh); err != nil {
			return err
		}
		return exec(tx, `insert into webhook_attempts (workspace_id, id, delivery_id, attempt, outcome, latency_ms)
			values ($1, $2, $3, 1, 'failed', 12.5)`, ws, attempt, bare)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Events are logged at the clock's time; the oldest is moved back to a
	// day the retention will have passed, as a long-lived database holds.
	err = testdb.InWorkspace(t, owner, ws.String(), func(tx pgx.Tx) error {
		return exec(tx, "update event_log set occurred_at = $2 where workspace_id = $1 and seq = 1", ws, oldAt)
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatal(err)
	}

	err = testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
		var seqs []int64
		var first time.Time
		if err := tx.QueryRow(ctx, `select array_agg(seq order by seq), min(occurred_at) from event_log
			where workspace_id = $1`, ws).Scan(&seqs, &first); err != nil {
			return err
		}
		if fmt.Sprint(seqs) != "[1 2 3]" || !first.Equal(oldAt) {
			return fmt.Errorf("event_log after 0025: seqs %v, oldest %v; want [1 2 3], %v", seqs, first, oldAt)
		}
		rows, err := tx.Query(ctx, `select id, occurred_at, status from webhook_deliveries where workspace_id = $1`, ws)
		if err != nil {
			return err
		}
		got := map[uuid.UUID]string{}
		var id uuid.UUID
		var at time.Time
		var status string
		if _, err := pgx.ForEachRow(rows, []any{&id, &at, &status}, func() error {
			got[id] = status + " " + at.UTC().Format(time.RFC3339Nano)
			return nil
		}); err != nil {
			return err
		}
		if len(got) != 3 || got[old] != "SUCCEEDED "+oldAt.UTC().Format(time.RFC3339Nano) ||
			got[bare] != "DEAD "+bareAt.UTC().Format(time.RFC3339Nano) || got[fresh] == "" {
			return fmt.Errorf("deliveries after 0025: %v", got)
		}
		var attempts int
		var attemptAt time.Time
		if err := tx.QueryRow(ctx, `select count(*), min(delivery_occurred_at) from webhook_attempts
			where workspace_id = $1 and delivery_id = $2`, ws, bare).Scan(&attempts, &attemptAt); err != nil {
			return err
		}
		if attempts != 1 || !attemptAt.Equal(bareAt) {
			return fmt.Errorf("attempts of the bare delivery: %d at %v, want 1 at %v", attempts, attemptAt, bareAt)
		}
		// The server's statements: the log numbers on, a delivery is written
		// and moved in today's partition.
		var last int64
		if err := tx.QueryRow(ctx, "select pmapi_emit_events($1, 9, $2, '{task.created}', '{\"{}\"}')",
			ws, []uuid.UUID{uuid.New()}).Scan(&last); err != nil {
			return err
		}
		if last != 4 {
			return fmt.Errorf("the next event is numbered %d, want 4", last)
		}
		next := uuid.New()
		if err := exec(tx, `insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id,
			occurred_at, event_type, data) values ($1, $2, $3, 'app', $2, now(), 'task.created', '{}')`,
			ws, next, sub); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `update webhook_deliveries set status = 'SUCCEEDED'
			where workspace_id = $1 and id = any($2)`, ws, []uuid.UUID{next, fresh})
		if err != nil || tag.RowsAffected() != 2 {
			return fmt.Errorf("moving two deliveries: %v rows, %v", tag.RowsAffected(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The store's reads on the moved rows: the feed lists the four events
	// in order, the bare delivery's detail finds its attempt in its day.
	pool := testdb.Pool(t, db.AppURL)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	st := webhook.Store{}
	page, err := st.Feed(ctx, shard, ws, webhook.FeedQuery{Types: []string{"task.created"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 4 || page.Events[0].Seq != 1 || page.Next != 4 {
		t.Errorf("the feed after 0025: %d events, next %d; want 4 from 1", len(page.Events), page.Next)
	}
	d, attempts, err := st.Detail(ctx, shard, ws, "app", bare)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "DEAD" || len(attempts) != 1 || attempts[0].LatencyMS != 12.5 {
		t.Errorf("the bare delivery's detail after 0025: %s with attempts %+v", d.Status, attempts)
	}
	err = testdb.InWorkspace(t, app, uuid.NewString(), func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `select (select count(*) from event_log where workspace_id = $1)
			+ (select count(*) from webhook_deliveries where workspace_id = $1)
			+ (select count(*) from webhook_attempts where workspace_id = $1)`, ws).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			return fmt.Errorf("another workspace sees %d of the rows", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
