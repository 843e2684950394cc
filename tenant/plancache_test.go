package tenant_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// TestLocalPlanCacheWorks: generic plans stay on the Citus releases that
// reuse their local plans, and are given up on those whose cache grows with
// every execution and on releases not known yet.
func TestLocalPlanCacheWorks(t *testing.T) {
	for version, want := range map[string]bool{
		"Citus 11.3.0 on x86_64-pc-linux-gnu":                  true,
		"Citus 12.1.10 on x86_64":                              true,
		"Citus 12.1.11 on x86_64":                              false,
		"Citus 13.0.5 on x86_64":                               true,
		"Citus 13.1.1 on x86_64":                               true,
		"Citus 13.2.0 on x86_64":                               true,
		"Citus 13.2.1 on x86_64":                               false,
		"Citus 13.2.2 on x86_64-pc-linux-gnu, compiled by gcc": false,
		"Citus 14.0.1 on x86_64":                               false,
		"Citus 14.1.0 on x86_64":                               false,
		"Citus 10.2.9 on x86_64":                               false, // before metadata on every node
		"PostgreSQL 15":                                        false,
	} {
		if got := tenant.LocalPlanCacheWorks(version); got != want {
			t.Errorf("%q: %v, want %v", version, got, want)
		}
	}
	for s, want := range map[string]bool{"on": true, "off": false} {
		p, err := tenant.ParsePlanCache(s)
		if err != nil || p.Allows("Citus 13.2.2 on x86_64") != want || p.Allows("Citus 13.2.0 on x86_64") != want {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := tenant.ParsePlanCache("sometimes"); err == nil {
		t.Error("a bad PMAPI_CITUS_PLAN_CACHE is accepted")
	}
}

// TestProbeLocalPlanCache: on each worker, as the server's role, the probe
// answers, and its answer is what the node's memory shows: as the superuser
// (who alone reads pg_backend_memory_contexts), a prepared fast-path read of
// a local shard run again and again with a generic plan keeps its plan's
// memory where the cache works, and grows it by a plan an execution where
// the cache is broken.
func TestProbeLocalPlanCache(t *testing.T) {
	if !testdb.OnCitus(t) {
		t.Skip("the local plan cache is Citus's (make test-citus)")
	}
	ctx := context.Background()
	rows, err := testdb.OwnerPool(t).Query(ctx, `select nodename || ':' || nodeport, groupid from pg_dist_node
		where groupid <> 0 and noderole = 'primary' and isactive order by groupid`)
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Addr  string
		Group int32
	}
	nodes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[node])
	if err != nil || len(nodes) == 0 {
		t.Fatalf("workers: %v %v", nodes, err)
	}
	db := testdb.Database(t)
	for _, n := range nodes {
		appURL, err := migrations.OnNode(db.AppURL, n.Addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pgx.ParseConfig(appURL)
		if err != nil {
			t.Fatal(err)
		}
		works, err := tenant.ProbeLocalPlanCache(ctx, cfg)
		if err != nil {
			t.Fatalf("node %s: %v", n.Addr, err)
		}
		adminURL, err := migrations.OnNode(db.AdminURL, n.Addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		grew := planMemoryGrows(t, adminURL, n.Group)
		t.Logf("node %s: probe says the cache works: %v; a plan's memory grew over 20 executions: %v",
			n.Addr, works, grew)
		if works == grew {
			t.Errorf("node %s: the probe says the cache works: %v, but the plan's memory grew: %v", n.Addr, works, grew)
		}
	}
}

// planMemoryGrows reports whether a prepared read of a local shard of users,
// run 20 times more with a generic plan, grows its plan's memory.
func planMemoryGrows(t *testing.T, adminURL string, group int32) bool {
	t.Helper()
	ctx := context.Background()
	conn := testdb.Conn(t, adminURL)
	var ws uuid.UUID
	for ws = uuid.New(); ; ws = uuid.New() {
		var g int32
		if err := conn.QueryRow(ctx, `select groupid from pg_dist_placement
			where shardid = get_shard_id_for_distribution_column('users', $1::uuid)`, ws).Scan(&g); err != nil {
			t.Fatal(err)
		}
		if g == group {
			break
		}
	}
	if _, err := conn.Exec(ctx, "set plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	const read = "select 1 from users where workspace_id = $1 and name = 'plan memory'"
	memory := func() int64 {
		var b int64
		if err := conn.QueryRow(ctx, `select coalesce(sum(total_bytes), 0)::bigint from pg_backend_memory_contexts
			where name = 'CachedPlan' and ident like '%plan memory%'`).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(n int) {
		for range n {
			if _, err := conn.Exec(ctx, read, ws); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(3) // the generic plan, then its local plan
	before := memory()
	run(20)
	after := memory()
	if before == 0 {
		t.Fatal("no plan of the prepared read in the backend's memory")
	}
	return after > before
}
