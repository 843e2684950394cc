package testdb

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/procstat"
	"github.com/pmapi/pmapi/tenant"
)

// Directory is the tenant directory a single-shard server has over the
// package's database: one shard, "default", bound as TenantSetting says. Tests
// of the directory, the workers and authentication start from it.
func Directory(tb testing.TB) (*tenant.Directory, *tenant.Shard) {
	tb.Helper()
	return DirectoryOver(tb, AppPool(tb))
}

// DirectoryOver is Directory over a pool of the test's own (another database,
// other pool limits).
func DirectoryOver(tb testing.TB, pool *pgxpool.Pool) (*tenant.Directory, *tenant.Shard) {
	tb.Helper()
	shard := tenant.NewShard("default", pool, TenantSetting(tb))
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return tenant.NewDirectory(shards), shard
}

// Pool connects to url (a role's URL of ExtraDatabase, a server that is down)
// with a pool of the test's own, closed when the test ends.
func Pool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Conn connects to url with a connection of the test's own, closed when the
// test ends.
func Conn(tb testing.TB, url string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	tb.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// TenantTables are the migrated schema's tables of tenants' rows: those under
// row-level security with a workspace_id column.
func TenantTables(tb testing.TB) []string {
	tb.Helper()
	rows, err := OwnerPool(tb).Query(context.Background(), `select c.relname from pg_class c
		where c.relkind in ('r', 'p') and c.relrowsecurity and c.relnamespace = 'public'::regnamespace
		  and exists (select 1 from pg_attribute a
			where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)`)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return names
}

// BackendCPU is the CPU seconds the connection's server process has used,
// from /proc; it skips the test when the server is not on this machine.
func BackendCPU(tb testing.TB, conn *pgx.Conn) float64 {
	tb.Helper()
	var pid int
	if err := conn.QueryRow(context.Background(), "select pg_backend_pid()").Scan(&pid); err != nil {
		tb.Fatal(err)
	}
	f := procstat.Fields(pid)
	if f == nil {
		tb.Skipf("the database server's process %d is not on this machine", pid)
	}
	return procstat.Seconds(f, procstat.User, procstat.System)
}
