package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// retainedTables are the tables kept by time partition (0025, 0028).
var retainedTables = []string{"event_log", "webhook_deliveries", "webhook_attempts", "audit_log"}

// exposedPartitionsSQL lists the partitions of the public schema that break
// the rule for partitions: the server's role holds no privilege on one (it
// reaches the rows through the parent, whose row-level security applies), and
// every unique index of one starts with workspace_id.
const exposedPartitionsSQL = `select c.relname from pg_class c
	where c.relnamespace = 'public'::regnamespace and c.relispartition
	  and (has_table_privilege('pmapi_app', c.oid, 'select, insert, update, delete, truncate, references, trigger')
	    or exists (select 1 from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
	      where i.indrelid = c.oid and i.indisunique and a.attname <> 'workspace_id'))
	order by 1`

// TestPartitionsAreReachedOnlyThroughTheirParent keeps the tenancy checks
// strict for partitions: the parent is checked as every tenant table is
// (TestEveryTenantTableIsShapedForTenancy, which skips partitions), and a
// partition must be out of the server's reach but through that parent.
func TestPartitionsAreReachedOnlyThroughTheirParent(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	rows, err := pool.Query(ctx, `select p.relname, p.relrowsecurity and p.relforcerowsecurity, count(*)
		from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
		where c.relnamespace = 'public'::regnamespace and p.relkind = 'p' group by 1, 2 order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	type parent struct {
		Name       string
		Forced     bool
		Partitions int
	}
	parents, err := pgx.CollectRows(rows, pgx.RowToStructByPos[parent])
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range parents {
		seen[p.Name] = true
		if !p.Forced {
			t.Errorf("%s has partitions but no forced row-level security", p.Name)
		}
	}
	for _, name := range retainedTables {
		if !seen[name] {
			t.Errorf("%s has no partitions", name)
		}
	}
	exposed := func(q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}) []string {
		rows, err := q.Query(ctx, exposedPartitionsSQL)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if bad := exposed(pool); len(bad) > 0 {
		t.Fatalf("partitions the server reaches directly or keyed without workspace_id first: %v", bad)
	}

	t.Run("a partition granted to the server is reported", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		var part string
		if err := tx.QueryRow(ctx, `select inhrelid::regclass::text from pg_inherits
			where inhparent = 'event_log'::regclass limit 1`).Scan(&part); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "grant select on "+pgx.Identifier{part}.Sanitize()+" to pmapi_app"); err != nil {
			t.Fatal(err)
		}
		if bad := exposed(tx); len(bad) != 1 || bad[0] != part {
			t.Errorf("reported %v, want [%s]", bad, part)
		}
	})
}

// TestPartitionsAreMadeAhead: the migration leaves each retained table a
// partition for every day of the coming week, so a write never waits for the
// retention job's first run.
func TestPartitionsAreMadeAhead(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	for _, table := range retainedTables {
		for day := range 7 {
			at := time.Now().Add(time.Duration(day) * 24 * time.Hour)
			var covered bool
			err := pool.QueryRow(ctx, `select exists (select 1 from pg_inherits i
				where i.inhparent = $1::regclass and pmapi_partition_end(i.inhrelid::regclass) > $2
				and pmapi_partition_end(i.inhrelid::regclass) <= $2 + interval '1 day')`, table, at).Scan(&covered)
			if err != nil {
				t.Fatal(err)
			}
			if !covered {
				t.Errorf("%s has no partition for %s", table, at.UTC().Format(time.DateOnly))
			}
		}
	}
}
