package task_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/tenant"
)

// TestListKeepsItsPlan: a big project's list page, asked for again and
// again on one connection, keeps one plan instead of being planned anew on
// every request (storekit's genericPlans and Limit). Before, with LIMIT as a
// parameter and PostgreSQL choosing, all ten pages here took custom plans:
// about 70 µs of PostgreSQL's CPU a page at 100,000 tasks.
func TestListKeepsItsPlan(t *testing.T) {
	testdb.SkipOnCitus(t, "Citus's router planner caches distributed plans its own way")
	ctx := context.Background()
	f, p := inProject(t, "task list plan")
	owner := testdb.OwnerPool(t)
	if err := testdb.InWorkspace(t, owner, f.WS.String(), func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `insert into tasks (workspace_id, id, project_id, title)
			select $1, gen_random_uuid(), $2, 'task ' || i from generate_series(1, 5000) i`, f.WS, p.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(ctx, "analyze tasks"); err != nil {
		t.Fatal(err)
	}

	cfg, err := tenant.PoolConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1 // one session, whose prepared statements are read below
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	store := task.Store{Events: event.Discard{}}
	for range 10 {
		var page jsonw.Rows
		if err := store.List(ctx, shard, f.WS, task.Filter{ProjectID: &p.ID, Limit: 51}, &page); err != nil ||
			page.Len() != 51 {
			t.Fatalf("List: %d tasks, %v", page.Len(), err)
		}
	}
	var generic, custom int64
	if err := pool.QueryRow(ctx, `select coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
		from pg_prepared_statements where statement like 'select t.id, t.project_id%'`).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if generic == 0 || custom > 5 {
		t.Errorf("10 list pages took %d generic and %d custom plans: PostgreSQL plans every page anew", generic, custom)
	}
}
