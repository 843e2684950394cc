package migrations_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

const policyExpr = "(workspace_id = (NULLIF(current_setting('pmapi.workspace_id'::text, true), ''::text))::uuid)"

// directoryTables are the only tables exempt from row-level security: they map
// client ids (and email addresses, 0018) to workspaces before any workspace is
// known (see 0001_directory.sql).
var directoryTables = map[string]bool{"workspaces": true, "client_directory": true, "oauth_user_codes": true,
	"user_emails": true}

// tenantTables lists every table of the public schema with a workspace_id column,
// less the directory and less partitions, which TestPartitionsAreReachedOnlyThroughTheirParent checks.
func tenantTables(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `select c.relname from pg_class c
		join pg_namespace n on n.oid = c.relnamespace
		join pg_attribute a on a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped
		where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range all {
		if !directoryTables[n] {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatal("no tenant tables found")
	}
	return names
}

// TestEveryTenantTableIsShapedForTenancy is the schema rule of docs/decisions/tenancy-and-citus.md,
// checked from the catalog so a table added later cannot skip it.
func TestEveryTenantTableIsShapedForTenancy(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	for _, table := range tenantTables(t, pool) {
		t.Run(table, func(t *testing.T) {
			var enabled, forced bool
			err := pool.QueryRow(ctx,
				"select relrowsecurity, relforcerowsecurity from pg_class where oid = $1::regclass", table,
			).Scan(&enabled, &forced)
			if err != nil {
				t.Fatal(err)
			}
			if !enabled || !forced {
				t.Errorf("row level security enabled=%v forced=%v, want both", enabled, forced)
			}
			rows, err := pool.Query(
				ctx,
				"select policyname, cmd, qual, with_check from pg_policies where schemaname = 'public' and tablename = $1",
				table,
			)
			if err != nil {
				t.Fatal(err)
			}
			type policy struct {
				Name, Cmd       string
				Qual, WithCheck *string
			}
			policies, err := pgx.CollectRows(rows, pgx.RowToStructByPos[policy])
			if err != nil {
				t.Fatal(err)
			}
			if len(policies) != 1 {
				t.Fatalf("%d policies, want exactly one", len(policies))
			}
			p := policies[0]
			if p.Cmd != "ALL" || p.Qual == nil || *p.Qual != policyExpr || p.WithCheck == nil || *p.WithCheck != policyExpr {
				t.Errorf(
					"policy %s for %s: using %v check %v, want %s for both",
					p.Name,
					p.Cmd,
					deref(p.Qual),
					deref(p.WithCheck),
					policyExpr,
				)
			}
			// workspace_id leads the primary key and every unique index.
			rows, err = pool.Query(ctx, `select i.indexrelid::regclass::text, i.indisprimary, a.attname
				from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
				where i.indrelid = $1::regclass and i.indisunique`, table)
			if err != nil {
				t.Fatal(err)
			}
			type index struct {
				Name    string
				Primary bool
				First   string
			}
			indexes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
			if err != nil {
				t.Fatal(err)
			}
			hasPK := false
			for _, ix := range indexes {
				hasPK = hasPK || ix.Primary
				if ix.First != "workspace_id" {
					t.Errorf("unique index %s starts with %s, not workspace_id", ix.Name, ix.First)
				}
			}
			if !hasPK {
				t.Error("no primary key")
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestServerRoleOwnsNothingAndCannotBypass checks the role the server uses.
func TestServerRoleOwnsNothingAndCannotBypass(t *testing.T) {
	ctx := context.Background()
	pool := testdb.AppPool(t)
	var user string
	var bypass, super bool
	err := pool.QueryRow(ctx,
		"select current_user, rolbypassrls, rolsuper from pg_roles where rolname = current_user",
	).Scan(&user, &bypass, &super)
	if err != nil {
		t.Fatal(err)
	}
	if user != "pmapi_app" || bypass || super {
		t.Fatalf("server connects as %s (bypassrls=%v, superuser=%v); want pmapi_app with neither", user, bypass, super)
	}
	var owned int
	err = pool.QueryRow(ctx, `select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where c.relowner = (select oid from pg_roles where rolname = current_user)
		and n.nspname not like 'pg_%'`).Scan(&owned)
	if err != nil {
		t.Fatal(err)
	}
	if owned != 0 {
		t.Errorf("server role owns %d relations, want none", owned)
	}
}

// seedTwoWorkspaces writes a user into each of two workspaces, through the
// server's role with the setting made as the tenant package makes it.
func seedTwoWorkspaces(t *testing.T, pool *pgxpool.Pool) (a, b uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	a, b = uuid.New(), uuid.New()
	for _, ws := range []uuid.UUID{a, b} {
		err := testdb.InWorkspace(t, pool, ws.String(), func(tx pgx.Tx) error {
			_, err := tx.Exec(
				ctx,
				"insert into users (workspace_id, id, email, name) values ($1, $2, $3, 'U')",
				ws,
				uuid.New(),
				ws.String()+"@example.com",
			)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func isRLSViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// inTx runs fn as the server's role with the workspace setting given (nil: unset).
func inTx(t *testing.T, pool *pgxpool.Pool, setting *string, fn func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if setting != nil {
		if err := testdb.BindWorkspace(t, tx, *setting); err != nil {
			t.Fatal(err)
		}
	}
	if err := testdb.AllowMultiShard(t, tx); err != nil {
		t.Fatal(err)
	}
	return fn(tx)
}

func TestRLSWithoutWorkspaceSeesAndWritesNothing(t *testing.T) {
	pool := testdb.AppPool(t)
	seedTwoWorkspaces(t, pool)
	empty := ""
	for _, setting := range []*string{nil, &empty} {
		name := "unset"
		if setting != nil {
			name = "reset to empty"
		}
		t.Run(name, func(t *testing.T) {
			for _, table := range tenantTables(t, testdb.OwnerPool(t)) {
				err := inTx(t, pool, setting, func(tx pgx.Tx) error {
					var n int
					count := fmt.Sprintf("select count(*) from %s", pgx.Identifier{table}.Sanitize())
					if err := tx.QueryRow(context.Background(), count).Scan(&n); err != nil {
						return fmt.Errorf("select: %w", err)
					}
					if n != 0 {
						return fmt.Errorf("sees %d rows", n)
					}
					_, err := tx.Exec(context.Background(), insertWorkspaceSQL(t, table), uuid.New())
					if !isRLSViolation(err) {
						return fmt.Errorf("insert without a workspace: got %v, want a row-level security violation", err)
					}
					return nil
				})
				if err != nil {
					t.Errorf("%s: %v", table, err)
				}
			}
		})
	}
}

func TestRLSWithWorkspaceSeesOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	pool := testdb.AppPool(t)
	a, b := seedTwoWorkspaces(t, pool)
	as := a.String()

	err := inTx(t, pool, &as, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "select distinct workspace_id from users")
		if err != nil {
			return err
		}
		seen, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		if len(seen) != 1 || seen[0] != a {
			return fmt.Errorf("workspace A sees rows of %v", seen)
		}
		// Even naming B explicitly finds nothing.
		var n int
		if err := tx.QueryRow(ctx, "select count(*) from users where workspace_id = $1", b).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("B's rows visible from A: %d %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, table := range tenantTables(t, testdb.OwnerPool(t)) {
		err := inTx(t, pool, &as, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, insertWorkspaceSQL(t, table), b)
			if !isRLSViolation(err) {
				return fmt.Errorf("insert of a B row from A: got %v, want a row-level security violation", err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", table, err)
		}
	}

	t.Run("update cannot move a row into another workspace", func(t *testing.T) {
		testdb.SkipOnCitus(
			t,
			"Citus refuses any update of the distribution column "+
				"(modifying the partition value of rows is not allowed) before row-level security is asked",
		)
		err := inTx(t, pool, &as, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "update users set workspace_id = $1 where workspace_id = $2", b, a)
			if !isRLSViolation(err) {
				return fmt.Errorf("got %v, want a row-level security violation", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("update and delete of B from A touch nothing", func(t *testing.T) {
		err := inTx(t, pool, &as, func(tx pgx.Tx) error {
			up, err := tx.Exec(ctx, "update users set name = 'hijacked' where workspace_id = $1", b)
			if err != nil {
				return err
			}
			del, err := tx.Exec(ctx, "delete from users where workspace_id = $1", b)
			if err != nil {
				return err
			}
			if up.RowsAffected() != 0 || del.RowsAffected() != 0 {
				return fmt.Errorf("updated %d, deleted %d of B's rows", up.RowsAffected(), del.RowsAffected())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a malformed setting is an error, not a bypass", func(t *testing.T) {
		bad := "not-a-uuid"
		err := inTx(t, pool, &bad, func(tx pgx.Tx) error {
			var n int
			return tx.QueryRow(ctx, "select count(*) from users").Scan(&n)
		})
		if err == nil || !strings.Contains(err.Error(), "uuid") {
			t.Fatalf("got %v, want an invalid uuid error", err)
		}
	})
}

// insertWorkspaceSQL inserts a row of table with only its workspace ($1) and,
// for a partitioned table, its partition key at the current time: without a
// key the row finds no partition before row-level security is asked.
func insertWorkspaceSQL(t *testing.T, table string) string {
	t.Helper()
	rows, err := testdb.OwnerPool(t).Query(context.Background(), `select a.attname::text
		from pg_partitioned_table p cross join unnest(p.partattrs) k(attnum)
		join pg_attribute a on a.attrelid = p.partrelid and a.attnum = k.attnum
		where p.partrelid = $1::regclass`, table)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	cols, vals := []string{"workspace_id"}, []string{"$1"}
	for _, k := range keys {
		cols, vals = append(cols, pgx.Identifier{k}.Sanitize()), append(vals, "now()")
	}
	return fmt.Sprintf("insert into %s (%s) values (%s)", pgx.Identifier{table}.Sanitize(),
		strings.Join(cols, ", "), strings.Join(vals, ", "))
}
