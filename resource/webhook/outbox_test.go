package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// TestOutboxStatementsVisitOnlyTheirRows: after a busy while (thousands of
// events fanned out, an emptied outbox vacuumed, a snapshot older than the
// latest deletes still open) each statement the fan-out sends to the outbox,
// run with the cached generic plan pgx's prepared statements get after five
// calls, reads a handful of buffers: the key of its own event, not every
// entry of the workspace (the plan of `id in ($2, $3)` on an outbox whose last
// vacuum counted a few rows) nor the whole heap (a sequential scan planned
// while a truncated heap was small). And vacuum leaves the outbox's heap its
// size (migration 0016).
func TestOutboxStatementsVisitOnlyTheirRows(t *testing.T) {
	testdb.SkipOnCitus(
		t,
		"it reads PostgreSQL's own plans of the statements; Citus plans each routed statement on a worker",
	)
	ctx := context.Background()
	db := testdb.Database(t)
	f, rec := recordedFixture(t)
	admin := testdb.Conn(t, db.AdminURL)
	vacuum := func() {
		t.Helper()
		if _, err := admin.Exec(ctx, "vacuum events"); err != nil {
			t.Fatal(err)
		}
	}
	pages := func() (n int64) {
		t.Helper()
		if err := admin.QueryRow(ctx, "select pg_relation_size('events') / 8192").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// An outbox after a burst: every event fanned out, then vacuumed.
	f.exec(t, "delete from events where workspace_id = $1 and id = any($2)", f.ws, f.outbox(t, 3000))
	before := pages()
	vacuum()
	if after := pages(); after < before {
		t.Errorf(
			"vacuum truncated the emptied outbox from %d to %d pages: a plan made now would scan the heap the next burst grows",
			before,
			after,
		)
	}
	// Another burst, two events still waiting when vacuum counts them: the
	// planner then takes the key for pages of dead entries around each live one.
	f.exec(t, "delete from events where workspace_id = $1 and id = any($2)", f.ws, f.outbox(t, 3000))
	f.outbox(t, 2)
	vacuum()

	// A snapshot older than what follows: what it deletes stays in the heap
	// and in the key, where a scan of the workspace would step over it.
	old, err := admin.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = old.Rollback(ctx) }()
	if _, err := old.Exec(ctx, "select count(*) from events"); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "delete from events where workspace_id = $1 and id = any($2)", f.ws, f.outbox(t, 3000))
	rec.start()
	for range 60 {
		if _, err := f.fanout(t, nil, f.outbox(t, 2)...); err != nil {
			t.Fatal(err)
		}
	}
	probed := 0
	for sql, st := range rec.stop() {
		if !strings.Contains(sql, " from events ") {
			continue
		}
		probed++
		buffers, plan := genericPlanBuffers(t, db.AppURL, st)
		if buffers > 8 {
			t.Errorf("%s\nwith its generic plan read %d buffers, want a few (its own key):\n%s", sql, buffers, plan)
		}
	}
	if probed < 2 {
		t.Fatalf("the fan-outs sent %d statements to the outbox, want its read and its delete", probed)
	}
}

// outbox inserts n events of the fixture's workspace, in id order, with
// multi-row VALUES (on Citus an INSERT ... SELECT ships rows with COPY, which
// row-level security refuses).
func (f fixture) outbox(t *testing.T, n int) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	for start := 0; start < n; start += 500 {
		var sql strings.Builder
		sql.WriteString("insert into events (workspace_id, id, type, data) values ")
		args := []any{f.ws}
		for i, id := range ids[start:min(start+500, n)] {
			if i > 0 {
				sql.WriteString(", ")
			}
			args = append(args, id)
			fmt.Fprintf(&sql, `($1, $%d, 'task.updated', '{"id": "tsk_x", "status": "TODO"}')`, len(args))
		}
		f.exec(t, sql.String(), args...)
	}
	return ids
}

// genericPlanBuffers runs a recorded statement as the server role, after the
// settings its batch made (the workspace's among them), in a transaction
// rolled back, with the generic plan, and returns the shared buffers it hit or
// read and the plan.
func genericPlanBuffers(t *testing.T, url string, st recorded) (int, string) {
	t.Helper()
	ctx := context.Background()
	conn := testdb.Conn(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, set := range st.settings {
		if _, err := tx.Exec(ctx, set.sql, set.args...); err != nil {
			t.Fatalf("%s: %v", set.sql, err)
		}
	}
	sql := st.sql
	lits := make([]string, len(st.args))
	for i, a := range st.args {
		id, ok := a.(uuid.UUID)
		if !ok {
			t.Fatalf("%s: argument %d is a %T, the probe binds uuids only", sql, i+1, a)
		}
		lits[i] = "'" + id.String() + "'::uuid"
	}
	var out []byte
	for _, stmt := range []string{"set local plan_cache_mode = force_generic_plan", "prepare outbox_probe as " + sql} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	probe := "explain (analyze, buffers, format json) execute outbox_probe(" + strings.Join(lits, ", ") + ")"
	if err := tx.QueryRow(ctx, probe).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v: %s", err, out)
	}
	var text strings.Builder
	plans[0].Plan.describe(&text, "")
	return plans[0].Plan.Hit + plans[0].Plan.Read, text.String()
}

// planNode is what a failure shows of an EXPLAIN (FORMAT JSON) node.
type planNode struct {
	Type      string     `json:"Node Type"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Filter    string     `json:"Filter"`
	Hit       int        `json:"Shared Hit Blocks"`
	Read      int        `json:"Shared Read Blocks"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) describe(w *strings.Builder, indent string) {
	fmt.Fprintf(w, "%s%s %s (buffers %d hit, %d read)", indent, n.Type, n.Index, n.Hit, n.Read)
	if n.IndexCond != "" {
		fmt.Fprintf(w, " index cond %s", n.IndexCond)
	}
	if n.Filter != "" {
		fmt.Fprintf(w, " filter %s", n.Filter)
	}
	w.WriteString("\n")
	for _, c := range n.Plans {
		c.describe(w, indent+"  ")
	}
}

// recordedFixture is a fixture whose store's every statement passes rec.
func recordedFixture(t *testing.T) (fixture, *statementRecorder) {
	t.Helper()
	rec := &statementRecorder{}
	cfg, err := tenant.PoolConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	f := newFixture(t)
	f.shard = tenant.NewShard("default", pool, testdb.TenantSetting(t))
	return f, rec
}

// statementRecorder keeps, while on, the last arguments of every statement a
// pool sent, alone or in a batch, with the settings queued before it in its
// batch (set_config, SET LOCAL), which its plan is made under.
type statementRecorder struct {
	mu       sync.Mutex
	on       bool
	settings []recorded // of the batch being sent
	seen     map[string]recorded
}

type recorded struct {
	sql      string
	args     []any
	settings []recorded
}

func (r *statementRecorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.seen = true, map[string]recorded{}
}

func (r *statementRecorder) stop() map[string]recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.seen
}

func (r *statementRecorder) record(sql string, args []any, inBatch bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if inBatch && (strings.Contains(sql, "set_config(") || strings.HasPrefix(sql, "set local ")) {
		r.settings = append(r.settings, recorded{sql: sql, args: args})
		return
	}
	if r.on {
		var settings []recorded
		if inBatch {
			settings = slices.Clone(r.settings)
		}
		r.seen[sql] = recorded{sql: sql, args: args, settings: settings}
	}
}

func (r *statementRecorder) TraceQueryStart(
	ctx context.Context,
	_ *pgx.Conn,
	d pgx.TraceQueryStartData,
) context.Context {
	r.record(d.SQL, d.Args, false)
	return ctx
}

func (r *statementRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart: the fixture's store sends one batch at a time.
func (r *statementRecorder) TraceBatchStart(
	ctx context.Context,
	_ *pgx.Conn,
	_ pgx.TraceBatchStartData,
) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settings = nil
	return ctx
}

func (r *statementRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.record(d.SQL, d.Args, true)
}

func (r *statementRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
