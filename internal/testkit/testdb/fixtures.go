package testdb

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/procstat"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// Directory is the tenant directory a single-shard server has over the
// package's database: one shard, "default", bound as TenantSetting says and on
// Citus routed (ServerShard). Tests of the directory, the workers and
// authentication start from it.
func Directory(tb testing.TB) (*tenant.Directory, *tenant.Shard) {
	tb.Helper()
	shard := ServerShard(tb)
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return tenant.NewDirectory(shards), shard
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

// Workspace creates a workspace named name on shard ("" for the default) and
// stops the test when the directory refuses it: a test's own fixture, not what
// it tests.
func Workspace(tb testing.TB, dir *tenant.Directory, name, shard string) tenant.Workspace {
	tb.Helper()
	w, err := dir.Create(context.Background(), name, shard)
	if err != nil {
		tb.Fatalf("testdb: workspace %q: %v", name, err)
	}
	return w
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

var nodePools struct {
	sync.Mutex
	pools []*pgxpool.Pool
}

// NodeOwnerPools connect as the owner to the package's database on every
// node: the one server on plain PostgreSQL, the coordinator and each worker
// on Citus, where River's tables are on every node (a job is on the node of
// the transaction that queued it). They close with the package's pools.
func NodeOwnerPools(tb testing.TB) []*pgxpool.Pool {
	tb.Helper()
	owner := OwnerPool(tb)
	nodePools.Lock()
	defer nodePools.Unlock()
	if nodePools.pools != nil {
		return nodePools.pools
	}
	pools := []*pgxpool.Pool{owner}
	if onCitus {
		rows, err := owner.Query(context.Background(), `select nodename || ':' || nodeport from pg_dist_node
			where groupid <> 0 and noderole = 'primary' and isactive order by groupid`)
		if err != nil {
			tb.Fatalf("testdb: the cluster's nodes: %v", err)
		}
		addrs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			tb.Fatalf("testdb: the cluster's nodes: %v", err)
		}
		for _, addr := range addrs {
			u, err := migrations.OnNode(Database(tb).OwnerURL, addr, nil)
			if err != nil {
				tb.Fatal(err)
			}
			p, err := tenant.Connect(context.Background(), u)
			if err != nil {
				tb.Fatalf("testdb: node %s: %v", addr, err)
			}
			pools = append(pools, p)
			BeforeClose(p.Close)
		}
	}
	nodePools.pools = pools
	return pools
}

// RiverCount sums what a query of one integer column (a count over River's
// tables) answers on every node (NodeOwnerPools).
func RiverCount(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	var total int
	for _, p := range NodeOwnerPools(tb) {
		var n int
		if err := p.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
			tb.Fatalf("testdb: %s: %v", query, err)
		}
		total += n
	}
	return total
}

// RiverExec runs a statement on River's tables of every node
// (NodeOwnerPools) and returns the rows it affected in all.
func RiverExec(tb testing.TB, stmt string, args ...any) int64 {
	tb.Helper()
	var total int64
	for _, p := range NodeOwnerPools(tb) {
		tag, err := p.Exec(context.Background(), stmt, args...)
		if err != nil {
			tb.Fatalf("testdb: %s: %v", stmt, err)
		}
		total += tag.RowsAffected()
	}
	return total
}
