package migrations_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

// unclassified lists the tables of the public schema that have no Citus class:
// on a cluster they would stay on the coordinator by accident.
func unclassified(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]string, error) {
	rows, err := q.Query(ctx, `select c.relname from pg_class c
		join pg_namespace n on n.oid = c.relnamespace
		where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
		and not exists (select 1 from schema_table_classes k where k.table_name = c.relname)
		order by 1`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// TestEveryTableHasACitusClass is docs/decisions/tenancy-and-citus.md's rule that each table is
// reference, distributed or coordinator-local, checked from the catalog so a
// table that a future migration forgets to place fails here.
func TestEveryTableHasACitusClass(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	missing, err := unclassified(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("tables without a class (call pmapi_place in the migration that creates them): %v", missing)
	}

	t.Run("a new table without a class is reported", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, "create table forgotten (workspace_id uuid, id uuid, primary key (workspace_id, id))")
		if err != nil {
			t.Fatal(err)
		}
		missing, err := unclassified(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		if len(missing) != 1 || missing[0] != "forgotten" {
			t.Fatalf("unclassified = %v, want [forgotten]", missing)
		}
	})
}

// TestTenantTablesAreDistributed ties the class to the table's shape: a table
// with workspace_id and row-level security is a tenant table and must be
// distributed (and nothing else may be), so its rows follow their workspace.
func TestTenantTablesAreDistributed(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	rows, err := pool.Query(ctx, `select k.table_name, k.class, c.relrowsecurity,
			exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
		from schema_table_classes k join pg_class c on c.oid = k.table_name::regclass order by k.ordinal`)
	if err != nil {
		t.Fatal(err)
	}
	type class struct {
		Table, Class string
		RLS, HasWS   bool
	}
	classes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[class])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range classes {
		tenant := c.RLS && c.HasWS
		if tenant != (c.Class == migrations.ClassDistributed) {
			t.Errorf("%s: class %s, but rls=%v workspace_id=%v", c.Table, c.Class, c.RLS, c.HasWS)
		}
	}
}

// TestCitusPlacementMatchesClasses runs on a Citus cluster (make test-citus):
// every class is applied, distributed tables share users' colocation group (so
// a workspace's rows of every table are on one node), and River's tables stay
// on the coordinator.
func TestCitusPlacementMatchesClasses(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	citus, err := migrations.HasCitus(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !citus {
		t.Skip("plain PostgreSQL: classes are recorded, not applied (make test-citus checks them)")
	}
	rows, err := pool.Query(ctx, `select k.table_name, k.class, coalesce(p.partmethod::text, ''),
			coalesce(p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'users'::regclass), false)
		from schema_table_classes k left join pg_dist_partition p on p.logicalrelid = k.table_name::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	type placed struct {
		Table, Class, Method string
		WithUsers            bool
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[placed])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{migrations.ClassDistributed: "h", migrations.ClassReference: "n", migrations.ClassLocal: ""}
	for _, p := range all {
		if p.Method != want[p.Class] {
			t.Errorf("%s: class %s but Citus partition method %q", p.Table, p.Class, p.Method)
		}
		if p.Class == migrations.ClassDistributed && !p.WithUsers {
			t.Errorf("%s: distributed but not colocated with users", p.Table)
		}
	}
	var riverPlaced int
	err = pool.QueryRow(ctx, `select count(*) from pg_dist_partition p join pg_class c on c.oid = p.logicalrelid
		join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1`, migrations.RiverSchema).Scan(&riverPlaced)
	if err != nil {
		t.Fatal(err)
	}
	if riverPlaced != 0 {
		t.Errorf("%d River tables are in Citus metadata; they must stay local to the coordinator", riverPlaced)
	}
	var fn bool
	err = pool.QueryRow(ctx, `select exists (select 1 from pg_dist_object
		where classid = 'pg_proc'::regclass and objid = 'rrca_text_similarity(text, text)'::regprocedure)`).Scan(&fn)
	if err != nil {
		t.Fatal(err)
	}
	if !fn {
		t.Error("rrca_text_similarity is not propagated to the workers")
	}
}
