package resource_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// pages records the statements a pool sends that read one table's rows,
// with their arguments, as a list sends them (in a batch).
type pages struct {
	mu    sync.Mutex
	from  string
	stmts []pgx.TraceBatchQueryData
}

func (p *pages) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (p *pages) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.from != "" && strings.Contains(d.SQL, " from "+p.from+" ") {
		p.stmts = append(p.stmts, d)
	}
}

func (p *pages) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (p *pages) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (p *pages) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (p *pages) watch(table string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.from, p.stmts = table, nil
}

func (p *pages) seen() []pgx.TraceBatchQueryData {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stmts
}

// seeds fill each list's table with 5,000 rows of one workspace, their
// updated_at a second apart, enough that without an index on updated_at
// PostgreSQL reads a filter on it or an order by it off the whole table.
var seeds = map[string]string{
	"projects": `insert into projects (workspace_id, id, name, updated_at)
		select $1, gen_random_uuid(), 'p ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
	"tasks": `insert into tasks (workspace_id, id, project_id, title, updated_at)
		select $1, gen_random_uuid(), $2, 't ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
	"risks": `insert into risks (workspace_id, id, project_id, title, updated_at)
		select $1, gen_random_uuid(), $2, 'r ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
	"notes": `insert into notes (workspace_id, id, project_id, body, updated_at)
		select $1, gen_random_uuid(), $2, 'n ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
	"action_items": `insert into action_items (workspace_id, id, title, updated_at)
		select $1, gen_random_uuid(), 'a ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
	"rrca_analyses": `insert into rrca_analyses (workspace_id, id, title, updated_at)
		select $1, gen_random_uuid(), 'a ' || i, now() - i * interval '1 second' from generate_series(1, 5000) i`,
}

// TestSyncListsUseAnIndex: every list a client mirrors, walked by updatedAt
// and filtered by updatedSince, reads its page through an index, never a
// sequential scan of the workspace's rows (migration 0027). The plans are
// EXPLAINed from the statements the real handlers send, with their
// arguments.
func TestSyncListsUseAnIndex(t *testing.T) {
	testdb.SkipOnCitus(t, "the plan is the worker's; seeding by INSERT ... SELECT needs COPY, refused under RLS")
	ctx := context.Background()
	cfg, err := tenant.PoolConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	tracer := &pages{}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	env := apitest.NewOnPool(t, pool)
	tn := env.NewTenant(t)
	tn.CreateProject(t, map[string]any{"name": "plans"})
	owner := testdb.OwnerPool(t)
	if err := testdb.InWorkspace(t, owner, tn.WorkspaceID, func(tx pgx.Tx) error {
		var projectID string
		if err := tx.QueryRow(ctx, "select id::text from projects where workspace_id = $1",
			tn.WorkspaceID).Scan(&projectID); err != nil {
			return err
		}
		for table, seed := range seeds {
			args := []any{tn.WorkspaceID}
			if strings.Contains(seed, "$2") {
				args = append(args, projectID)
			}
			if _, err := tx.Exec(ctx, seed, args...); err != nil {
				return fmt.Errorf("seed %s: %w", table, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for table := range seeds {
		if _, err := owner.Exec(ctx, "analyze "+table); err != nil {
			t.Fatal(err)
		}
	}
	lists := []struct{ table, path string }{
		{"projects", apitest.ProjectBase + "list"},
		{"tasks", apitest.TaskBase + "list"},
		{"risks", apitest.RiskBase + "list"},
		{"notes", apitest.NoteBase + "list"},
		{"action_items", apitest.ActionItemBase + "list"},
		{"rrca_analyses", apitest.RRCABase},
	}
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	ws := uuid.MustParse(tn.WorkspaceID)
	// The last 100 seconds' changes: 100 rows of 5,000.
	since := time.Now().Add(-100 * time.Second).UTC().Format(time.RFC3339Nano)
	for _, l := range lists {
		for _, q := range []map[string]string{
			{"sort": "updatedAt"},
			{"sort": "updatedAt", "updatedSince": since},
			{"updatedSince": since},
		} {
			tracer.watch(l.table)
			r := tn.Get(t, l.path, q)
			if r.Status != 200 {
				t.Fatalf("%s %v: %d %s", l.path, q, r.Status, r.Raw)
			}
			stmts := tracer.seen()
			if len(stmts) == 0 {
				t.Fatalf("%s %v: no statement read %s", l.path, q, l.table)
			}
			for _, s := range stmts {
				var plan string
				if err := shard.Read(ctx, ws, func(b *pgx.Batch) {
					b.Queue("explain (format json) "+s.SQL, s.Args...).QueryRow(func(r pgx.Row) error {
						return r.Scan(&plan)
					})
				}); err != nil {
					t.Fatalf("explain %s: %v", s.SQL, err)
				}
				if strings.Contains(plan, `"Seq Scan"`) || !strings.Contains(plan, l.table+"_updated") {
					t.Errorf("%s %v does not read %s by its updated_at index:\n%s\n%s", l.path, q, l.table, s.SQL, plan)
				}
			}
		}
	}
}
