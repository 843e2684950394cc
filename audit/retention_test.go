package audit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// The retention tests move entries to a day past the retention and drop it,
// so they do not run in parallel with each other: one's drop must not take a
// day another is still moving entries into.

const retention = 720 * time.Hour

// backdate moves every entry of workspace ws to 40 days ago, into a partition
// made for that day, as the superuser past row-level security: entries as old
// as a long-lived database holds.
func backdate(t *testing.T, ws uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	admin := testdb.Conn(t, testdb.Database(t).AdminURL)
	then := time.Now().Add(-40 * 24 * time.Hour)
	if _, err := admin.Exec(ctx, "select pmapi_make_audit_partitions($1, $2)", then.Add(-24*time.Hour),
		then.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// One time for all: Citus refuses a stable function on a column in an
	// UPDATE.
	tag, err := admin.Exec(ctx, "update audit_log set at = $2 where workspace_id = $1", ws, then)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() == 0 {
		t.Fatal("backdated no entry")
	}
}

// partitionEnds lists the upper bounds of audit_log's partitions, oldest
// first.
func partitionEnds(t *testing.T) []time.Time {
	t.Helper()
	rows, err := testdb.OwnerPool(t).Query(context.Background(), `select pmapi_partition_end(inhrelid::regclass)
		from pg_inherits where inhparent = 'audit_log'::regclass order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	return ends
}

// countEntries counts workspace ws's entries as seen by the server's role
// bound to workspace as.
func countEntries(t *testing.T, as string, ws uuid.UUID) int {
	t.Helper()
	var n int
	err := testdb.InWorkspace(t, testdb.AppPool(t), as, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "select count(*) from audit_log where workspace_id = $1", ws).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetentionDropsOldPartitionsUnderWrites: a retention run drops the days
// past the retention and makes those ahead while changes append entries on
// other connections; every entry younger than the retention is still there,
// none past it is, and another workspace sees none of them.
func TestRetentionDropsOldPartitionsUnderWrites(t *testing.T) {
	ctx := context.Background()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	other := testdb.Workspace(t, dir, t.Name()+" other", "").ID
	for range 5 {
		record(t, ws, audit.KeyCreated)
	}
	backdate(t, ws)
	if n := countEntries(t, ws.String(), ws); n != 5 {
		t.Fatalf("%d backdated entries, want 5", n)
	}

	write := func() error {
		return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			return audit.Record(ctx, tx, ws, audit.KeyRenamed, target)
		})
	}
	stop := make(chan struct{})
	var mu sync.Mutex
	young := 0
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
				if err := write(); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				young++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	// As the job would run two days after the last day made: the server's
	// role also makes the next two days.
	ends := partitionEnds(t)
	later := ends[len(ends)-1].Add(-audit.PartitionsAhead).Add(48 * time.Hour)
	kept, err := audit.KeepPartitions(ctx, testdb.ServerShard(t), retention, later)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a change failed to append its entry during the retention run: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if kept.Dropped < 1 || kept.Made < 2 {
		t.Errorf("dropped %d partitions, made %d; want the old day dropped and two days made", kept.Dropped, kept.Made)
	}

	ends = partitionEnds(t)
	if cutoff := later.Add(-retention); len(ends) == 0 || !ends[0].After(cutoff) {
		t.Errorf("audit_log keeps a partition past the retention (%v): %v", cutoff, ends)
	}
	if last := ends[len(ends)-1]; last.Before(later.Add(audit.PartitionsAhead)) {
		t.Errorf("audit_log has partitions only up to %v, want a week ahead of %v", last, later)
	}
	if n := countEntries(t, ws.String(), ws); young == 0 || n != young {
		t.Errorf("after the drop %d entries, want the %d appended during the run (the 5 old ones gone)", n, young)
	}
	if got := list(t, ws, audit.Filter{Action: audit.KeyCreated}); len(got) != 0 {
		t.Errorf("entries past the retention are still listed: %+v", got)
	}
	if n := countEntries(t, other.String(), ws); n != 0 {
		t.Errorf("another workspace sees %d of the entries", n)
	}
}

// TestRetentionIsTheOnlyWayToDropEntries: neither the server nor the owner's
// function drops a day still being written, and the server's role reaches
// the partitions only through the two functions: it may not lock the tables,
// drop, detach, truncate or change a partition, nor empty the parent.
func TestRetentionIsTheOnlyWayToDropEntries(t *testing.T) {
	ctx := context.Background()
	dir, _ := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	record(t, ws, audit.KeyCreated)
	shard := testdb.ServerShard(t)
	if _, err := audit.KeepPartitions(ctx, shard, 23*time.Hour, time.Now()); err == nil {
		t.Error("KeepPartitions took a 23h retention")
	}
	var n int
	err := shard.Pool.QueryRow(ctx, "select pmapi_drop_audit_partitions(now() - interval '1 hour')").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "at least 24h") {
		t.Errorf("pmapi_drop_audit_partitions an hour back: dropped %d (%v)", n, err)
	}
	var today string
	if err := testdb.OwnerPool(t).QueryRow(ctx, `select inhrelid::regclass::text from pg_inherits
		where inhparent = 'audit_log'::regclass and pmapi_partition_end(inhrelid::regclass) > now()
		order by pmapi_partition_end(inhrelid::regclass) limit 1`).Scan(&today); err != nil {
		t.Fatal(err)
	}
	part := pgx.Identifier{today}.Sanitize()
	for _, stmt := range []string{
		"select pmapi_lock_audit('access exclusive')",
		"drop table " + part,
		"alter table audit_log detach partition " + part,
		"truncate " + part,
		"truncate audit_log",
		// One workspace's rows: on Citus a statement on every shard meets the
		// server's multi-shard guard before its privileges are checked.
		"delete from " + part + " where workspace_id = $1",
		"update " + part + " set action = 'key.revoked' where workspace_id = $1",
		"select count(*) from " + part + " where workspace_id = $1",
	} {
		err := testdb.InWorkspace(t, shard.Pool, ws.String(), func(tx pgx.Tx) error {
			var args []any
			if strings.Contains(stmt, "$1") {
				args = append(args, ws)
			}
			_, err := tx.Exec(ctx, stmt, args...)
			return err
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "42501" && !strings.Contains(pgErr.Message, "permission denied")) {
			t.Errorf("the server's role: %s: %v, want permission denied", stmt, err)
		}
	}
	if got := list(t, ws, audit.Filter{}); len(got) != 1 {
		t.Errorf("%d entries after the refused statements, want 1", len(got))
	}
}
