package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/migrations"
)

// ServerStats is what the cluster did during one phase besides running its
// statements: the work that lands in whichever phase is running when it comes
// (checkpoints, WAL, autovacuum) and the state of the tables a write leaves
// dead rows in. Counters are the phase's deltas; n_dead_tup and the sizes are
// read before and after.
type ServerStats struct {
	// WAL and Bgwriter are the deltas of every numeric column of
	// pg_stat_wal and pg_stat_bgwriter (cluster-wide: pgbench's database
	// too, but no reference runs during a pmapi phase).
	WAL      map[string]float64 `json:"wal"`
	Bgwriter map[string]float64 `json:"bgwriter"`
	Tables   []TableStats       `json:"tables"`
	// Waits and OldestSnapshot come from sampling pg_stat_activity
	// (-statements only), below.
	Waits          []WaitShare `json:"waits,omitempty"`
	ActiveBackends float64     `json:"activeBackends,omitempty"`
	OldestSnapshot *Snapshot   `json:"oldestSnapshot,omitempty"`
}

// TableStats is one hot table's phase: pg_stat_all_tables and
// pg_statio_all_tables deltas (TableCounters), its dead tuples and size (heap
// and indexes, in 8 kB pages) before and after.
type TableStats struct {
	Table string `json:"table"`
	TableCounters
	DeadBefore    int64   `json:"deadBefore"`
	DeadAfter     int64   `json:"deadAfter"`
	PagesBefore   int64   `json:"heapPagesBefore"`
	PagesAfter    int64   `json:"heapPagesAfter"`
	IdxPagesAfter int64   `json:"indexPagesAfter"`
	RelTuples     float64 `json:"relTuplesAfter"` // pg_class.reltuples: what the planner believes
	RelPages      int64   `json:"relPagesAfter"`
}

// TableCounters are the cumulative counters of a table, whose phase is the
// difference of two readings.
type TableCounters struct {
	Inserted     int64 `json:"inserted"`
	Updated      int64 `json:"updated"`
	HotUpdated   int64 `json:"hotUpdated"`
	Deleted      int64 `json:"deleted"`
	Autovacuums  int64 `json:"autovacuums"`
	Autoanalyzes int64 `json:"autoanalyzes"`
	SeqScans     int64 `json:"seqScans"`
	SeqTupRead   int64 `json:"seqTuplesRead"`
	IdxScans     int64 `json:"indexScans"`
	HeapBlksHit  int64 `json:"heapBlksHit"`
	HeapBlksRead int64 `json:"heapBlksRead"`
	IdxBlksHit   int64 `json:"indexBlksHit"`
	IdxBlksRead  int64 `json:"indexBlksRead"`
}

// fields are the counters in the order counterColumns reads them.
func (c *TableCounters) fields() []*int64 {
	return []*int64{&c.Inserted, &c.Updated, &c.HotUpdated, &c.Deleted, &c.Autovacuums, &c.Autoanalyzes,
		&c.SeqScans, &c.SeqTupRead, &c.IdxScans, &c.HeapBlksHit, &c.HeapBlksRead, &c.IdxBlksHit, &c.IdxBlksRead}
}

const counterColumns = `t.n_tup_ins, t.n_tup_upd, t.n_tup_hot_upd, t.n_tup_del, t.autovacuum_count, t.autoanalyze_count,
	coalesce(t.seq_scan, 0), coalesce(t.seq_tup_read, 0), coalesce(t.idx_scan, 0), coalesce(io.heap_blks_hit, 0),
	coalesce(io.heap_blks_read, 0), coalesce(io.idx_blks_hit, 0), coalesce(io.idx_blks_read, 0)`

// since turns c into what happened after earlier.
func (c *TableCounters) since(earlier TableCounters) {
	was := earlier.fields()
	for i, f := range c.fields() {
		*f -= *was[i]
	}
}

// hotTables are the tables a status update and its delivery write.
var hotTables = []string{"public.events", "public.tasks", "public.task_search", migrations.RiverSchema + ".river_job",
	"public.webhook_deliveries"}

type statsSnapshot struct {
	wal, bgwriter map[string]float64
	tables        map[string]TableStats
}

// readServerStats takes one snapshot of the counters, as a superuser in
// pmapi's database (pg_stat_all_tables is per database).
func readServerStats(ctx context.Context, adminURL string) (statsSnapshot, error) {
	snap := statsSnapshot{tables: map[string]TableStats{}}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return snap, err
	}
	defer conn.Close(ctx)
	if snap.wal, err = numericColumns(ctx, conn, "pg_stat_wal"); err != nil {
		return snap, err
	}
	if snap.bgwriter, err = numericColumns(ctx, conn, "pg_stat_bgwriter"); err != nil {
		return snap, err
	}
	rows, err := conn.Query(ctx, `select t.schemaname || '.' || t.relname, t.n_dead_tup, pg_relation_size(t.relid) / 8192,
			pg_indexes_size(t.relid) / 8192, c.reltuples, c.relpages, `+counterColumns+`
		from pg_stat_all_tables t join pg_statio_all_tables io using (relid) join pg_class c on c.oid = t.relid
		where t.schemaname || '.' || t.relname = any($1)`, hotTables)
	if err != nil {
		return snap, err
	}
	var ts TableStats
	dest := append(
		[]any{&ts.Table, &ts.DeadAfter, &ts.PagesAfter, &ts.IdxPagesAfter, &ts.RelTuples, &ts.RelPages},
		anys(ts.fields())...)
	_, err = pgx.ForEachRow(rows, dest, func() error {
		snap.tables[ts.Table] = ts
		return nil
	})
	return snap, err
}

func anys(ps []*int64) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// numericColumns reads a one-row statistics view as name -> value, whatever
// its columns are in this PostgreSQL release.
func numericColumns(ctx context.Context, conn *pgx.Conn, view string) (map[string]float64, error) {
	out := map[string]float64{}
	var m map[string]any
	if err := conn.QueryRow(ctx, "select to_jsonb(v) from "+view+" v").Scan(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", view, err)
	}
	for k, v := range m {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out, nil
}

// serverDelta is what happened between two snapshots.
func serverDelta(a, b statsSnapshot) *ServerStats {
	d := &ServerStats{WAL: map[string]float64{}, Bgwriter: map[string]float64{}}
	for k, v := range b.wal {
		d.WAL[k] = v - a.wal[k]
	}
	for k, v := range b.bgwriter {
		d.Bgwriter[k] = v - a.bgwriter[k]
	}
	for _, name := range hotTables {
		after, ok := b.tables[name]
		if !ok {
			continue
		}
		before := a.tables[name]
		after.since(before.TableCounters)
		after.DeadBefore, after.PagesBefore = before.DeadAfter, before.PagesAfter
		d.Tables = append(d.Tables, after)
	}
	return d
}

// printServerStats writes, for the writing phases, where WAL and checkpoints
// went and what each hot table went through, per unit of the phase's work.
func printServerStats(w io.Writer, s Scenario) {
	st := s.Server
	units := float64(scenarioUnits(s))
	if st == nil || units == 0 ||
		(s.Name != "write" && !strings.HasPrefix(s.Name, "deliver") && s.Name != "latency write") {
		return
	}
	fmt.Fprintf(
		w,
		"\n%s: the server per %s: WAL %.0f bytes, %.2f records, %.3f full-page images; checkpoints %.0f timed, %.0f "+
			"requested, %.1f buffers written by checkpoints, %.1f by backends",
		s.Name,
		unitName(s),
		st.WAL["wal_bytes"]/units,
		st.WAL["wal_records"]/units,
		st.WAL["wal_fpi"]/units,
		st.Bgwriter["checkpoints_timed"],
		st.Bgwriter["checkpoints_req"],
		st.Bgwriter["buffers_checkpoint"]/units,
		st.Bgwriter["buffers_backend"]/units,
	)
	if st.ActiveBackends > 0 {
		fmt.Fprintf(w, "; %.1f backends active on average", st.ActiveBackends)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(
		tw,
		"table\tins\tupd (hot)\tdel\tdead before → after\tautovacuum\tautoanalyze\tseq scans\theap hit/unit\tindex "+
			"hit/unit\theap pages before → after\treltuples\t",
	)
	for _, t := range st.Tables {
		fmt.Fprintf(
			tw,
			"%s\t%d\t%d (%d)\t%d\t%d → %d\t%d\t%d\t%d\t%.1f\t%.1f\t%d → %d\t%.0f\t\n",
			t.Table,
			t.Inserted,
			t.Updated,
			t.HotUpdated,
			t.Deleted,
			t.DeadBefore,
			t.DeadAfter,
			t.Autovacuums,
			t.Autoanalyzes,
			t.SeqScans,
			float64(t.HeapBlksHit)/units,
			float64(t.IdxBlksHit)/units,
			t.PagesBefore,
			t.PagesAfter,
			t.RelTuples,
		)
	}
	tw.Flush()
	if len(st.Waits) > 0 {
		var parts []string
		for _, wt := range st.Waits {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", wt.Event, wt.Share*100))
		}
		fmt.Fprintf(w, "wait events of active backends: %s\n", strings.Join(parts, ", "))
	}
	if o := st.OldestSnapshot; o != nil {
		fmt.Fprintf(w, "oldest snapshot seen: %d transactions behind, %.1f s in its transaction, %s (%s): %s\n",
			o.AgeXids, o.XactSeconds, o.BackendType, o.State, o.Query)
	}
}

// scenarioUnits is what a scenario's figures are divided by: deliveries in
// the deliver scenarios, successful requests otherwise.
func scenarioUnits(s Scenario) int {
	if strings.HasPrefix(s.Name, "deliver") {
		return s.Deliveries
	}
	return s.Requests - s.Errors
}

func unitName(s Scenario) string {
	if strings.HasPrefix(s.Name, "deliver") {
		return "delivery"
	}
	return "request"
}

// sortWaits orders the wait shares, the largest first.
func sortWaits(ws []WaitShare) {
	sort.Slice(ws, func(i, j int) bool { return ws[i].Share > ws[j].Share })
}
