package webhook_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
)

// The retention tests move rows to a day past the retention and drop it, so
// they run one at a time (not in parallel): one's drop must not take a day
// another is still moving rows into.

const pastRetention = 40 * 24 * time.Hour

// backdate moves the rows of table that where selects (with $1 the
// workspace, $2 the time) to pastRetention ago, into a partition made for that day, as the
// superuser past row-level security: rows as old as a long-lived database
// holds.
func backdate(t *testing.T, table, column, where string, ws uuid.UUID, args ...any) {
	t.Helper()
	ctx := context.Background()
	admin := testdb.Conn(t, testdb.Database(t).AdminURL)
	then := time.Now().Add(-pastRetention)
	_, err := admin.Exec(ctx, "select pmapi_make_partitions($1, $2)", then.Add(-24*time.Hour), then.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// One time for all: Citus refuses timestamptz arithmetic (a stable
	// function) on a column in an UPDATE.
	tag, err := admin.Exec(ctx, "update "+table+" set "+column+" = $2 where workspace_id = $1 and "+where,
		append([]any{ws, then}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() == 0 {
		t.Fatalf("backdated no row of %s", table)
	}
}

// partitionsOf lists the partitions of table by their upper bound.
func partitionsOf(t *testing.T, table string) []time.Time {
	t.Helper()
	rows, err := testdb.OwnerPool(t).Query(context.Background(), `select pmapi_partition_end(inhrelid::regclass)
		from pg_inherits where inhparent = $1::regclass order by 1`, table)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	return ends
}

func newSubscription(t *testing.T, ws uuid.UUID, clientID string) uuid.UUID {
	t.Helper()
	sub := uuid.New()
	err := testdb.InWorkspace(t, testdb.AppPool(t), ws.String(), func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `insert into webhook_subscriptions (workspace_id, id, client_id, url,
			events, secret_sealed, secret_prefix) values ($1, $2, $3, 'https://example.com/h', '{task.created}', '\x00',
			'whsec_')`, ws, sub, clientID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestRetentionDropsOldPartitionsUnderWrites: a retention run drops the
// partitions past the retention and makes those ahead while deliveries are
// written and moved on other connections; every delivery younger than the
// retention is still there and moved, none past it is, the dropped days'
// partitions are gone and the coming week's exist. Another workspace sees
// none of it.
func TestRetentionDropsOldPartitionsUnderWrites(t *testing.T) {
	ctx := context.Background()
	tn, other := apitest.NewTenant(t), apitest.NewTenant(t)
	ws := uuid.MustParse(tn.WorkspaceID)
	shard := testdb.ServerShard(t)
	st := webhook.Store{}
	sub := newSubscription(t, ws, "app")
	write := func() (uuid.UUID, error) {
		d, _, err := st.NewTestDelivery(ctx, shard, ws, "app", sub)
		if err != nil {
			return uuid.Nil, err
		}
		sent := webhook.Sent{At: time.Now(), Result: webhook.Result{Status: 204, Latency: time.Millisecond}}
		return d.ID, st.RecordTest(ctx, shard, ws, d, sent)
	}
	var old []uuid.UUID
	for range 5 {
		id, err := write()
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, id)
	}
	backdate(t, "webhook_deliveries", "occurred_at", "id = any($3)", ws, old)
	if _, err := emitInTx(t, ws, []string{"task.created"}, nil); err != nil {
		t.Fatal(err)
	}
	backdate(t, "event_log", "occurred_at", "true", ws)

	stop := make(chan struct{})
	var mu sync.Mutex
	var young []uuid.UUID
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id, err := write()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				young = append(young, id)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	// As the job would run two days after the last day made: the server's
	// role also makes the next two days.
	made := partitionsOf(t, "webhook_deliveries")
	later := made[len(made)-1].Add(-webhook.PartitionsAhead).Add(48 * time.Hour)
	kept, err := webhook.KeepPartitions(ctx, shard, webhook.DefaultEventRetention, later)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a writer failed during the retention run: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if kept.Dropped < 3 || kept.Made < 3 {
		t.Errorf("dropped %d partitions, made %d; want at least one of each table", kept.Dropped, kept.Made)
	}

	cutoff := later.Add(-webhook.DefaultEventRetention)
	for _, table := range []string{"event_log", "webhook_deliveries", "webhook_attempts"} {
		ends := partitionsOf(t, table)
		if len(ends) == 0 || !ends[0].After(cutoff) {
			t.Errorf("%s keeps a partition past the retention: %v", table, ends)
		}
		if last := ends[len(ends)-1]; last.Before(later.Add(webhook.PartitionsAhead)) {
			t.Errorf("%s has partitions only up to %v, want a week ahead", table, last)
		}
	}

	var kept1, moved, gone int
	err = testdb.InWorkspace(t, testdb.AppPool(t), ws.String(), func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select count(*), count(*) filter (where status = 'SUCCEEDED' and attempts = 1),
			(select count(*) from webhook_deliveries where workspace_id = $1 and id = any($3))
			from webhook_deliveries where workspace_id = $1 and id = any($2)`, ws, young, old).Scan(&kept1, &moved, &gone)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(young) == 0 || kept1 != len(young) || moved != len(young) || gone != 0 {
		t.Errorf("after the drop: %d of %d young deliveries kept, %d moved; %d of the old ones left",
			kept1, len(young), moved, gone)
	}
	var seen int
	err = testdb.InWorkspace(t, testdb.AppPool(t), other.WorkspaceID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "select count(*) from webhook_deliveries where workspace_id = $1", ws).Scan(&seen)
	})
	if err != nil || seen != 0 {
		t.Errorf("another workspace sees %d of the deliveries (%v)", seen, err)
	}
}

// TestRetentionRefusesLessThanADay: neither the server nor the owner's
// function drops a day still being written, and the server's role reaches
// the partition DDL only through the two functions.
func TestRetentionRefusesLessThanADay(t *testing.T) {
	ctx := context.Background()
	shard := testdb.ServerShard(t)
	if _, err := webhook.KeepPartitions(ctx, shard, 23*time.Hour, time.Now()); err == nil {
		t.Error("KeepPartitions took a 23h retention")
	}
	var n int
	err := shard.Pool.QueryRow(ctx, "select pmapi_drop_partitions(now() - interval '1 hour')").Scan(&n)
	if err == nil {
		t.Errorf("pmapi_drop_partitions dropped %d partitions an hour old", n)
	}
	// The helpers are the owner's alone: the server's role could otherwise
	// lock the tables, or lift its own multi-shard guard.
	for _, helper := range []string{"pmapi_lock_retained('access exclusive')", "pmapi_allow_partition_ddl()"} {
		if _, err := shard.Pool.Exec(ctx, "select "+helper); err == nil ||
			!strings.Contains(err.Error(), "permission denied") {
			t.Errorf("the server's role calls %s: %v", helper, err)
		}
	}
}
