package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
)

// Statement is what one normalised statement cost a phase, per unit of the
// phase's work (a delivery in the deliver scenario): pg_stat_statements'
// calls, execution plus planning time and rows, divided by the units; and per
// call the shared buffers it found in memory (hit) and had to read, which
// show a plan that visits more of a table than it returns.
type Statement struct {
	Query           string  `json:"query"`
	CallsPerUnit    float64 `json:"callsPerUnit"`
	MicrosPerUnit   float64 `json:"microsecondsPerUnit"`
	RowsPerCall     float64 `json:"rowsPerCall"`
	BlksHitPerCall  float64 `json:"sharedBlksHitPerCall"`
	BlksReadPerCall float64 `json:"sharedBlksReadPerCall"`
}

// statementsExtension makes pg_stat_statements readable in pmapi's database
// and has it time planning too (pgx prepares its statements, so planning is
// rare, but a statement built per call plans every time). Only a cluster
// launched with the library preloaded (-statements) has it.
func statementsExtension(ctx context.Context, adminURL, db string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		"create extension if not exists pg_stat_statements",
		"alter database " + pgx.Identifier{db}.Sanitize() + " set pg_stat_statements.track_planning = on",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// resetStatements empties pg_stat_statements before a measured phase.
func resetStatements(ctx context.Context, adminURL string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "select pg_stat_statements_reset()")
	return err
}

// statementRow is one pg_stat_statements entry of pmapi's database.
type statementRow struct {
	Query    string
	Calls    int64
	Millis   float64
	Rows     int64
	BlksHit  int64
	BlksRead int64
}

// readStatements reads every entry of db (pgbench's database is another).
func readStatements(ctx context.Context, adminURL, db string) ([]statementRow, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `select s.query, s.calls, s.total_exec_time + s.total_plan_time, s.rows,
		s.shared_blks_hit, s.shared_blks_read
		from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`, db)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[statementRow])
}

var (
	spaces = regexp.MustCompile(`\s+`)
	// A multi-row VALUES list differs in its row count only (a row may hold
	// a call such as clock_timestamp()).
	valueRows = regexp.MustCompile(`(?i)values \((?:[^()]|\([^()]*\))*\)(?: ?, ?\((?:[^()]|\([^()]*\))*\))*`)
)

// normalise folds the entries that differ only in the rows of a VALUES list
// into one and shortens the text to what names the statement.
func normalise(q string) string {
	q = strings.TrimSpace(spaces.ReplaceAllString(q, " "))
	q = valueRows.ReplaceAllString(q, "values (...)")
	if len(q) > 110 {
		q = q[:107] + "..."
	}
	return q
}

// perUnit folds the entries, divides them by units and sorts them by time,
// the costliest first; entries under half a microsecond a unit are left out.
func perUnit(rows []statementRow, units int) []Statement {
	if units <= 0 {
		return nil
	}
	type sum struct {
		calls, rows, hit, read int64
		millis                 float64
	}
	by := map[string]*sum{}
	for _, r := range rows {
		k := normalise(r.Query)
		if by[k] == nil {
			by[k] = &sum{}
		}
		by[k].calls += r.Calls
		by[k].rows += r.Rows
		by[k].millis += r.Millis
		by[k].hit += r.BlksHit
		by[k].read += r.BlksRead
	}
	var out []Statement
	for q, s := range by {
		st := Statement{
			Query:         q,
			CallsPerUnit:  float64(s.calls) / float64(units),
			MicrosPerUnit: s.millis * 1000 / float64(units),
		}
		if st.MicrosPerUnit < 0.5 {
			continue
		}
		if s.calls > 0 {
			st.RowsPerCall = float64(s.rows) / float64(s.calls)
			st.BlksHitPerCall = float64(s.hit) / float64(s.calls)
			st.BlksReadPerCall = float64(s.read) / float64(s.calls)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MicrosPerUnit > out[j].MicrosPerUnit })
	return out
}

// printStatements writes the table of one scenario's statements and their sum.
func printStatements(w io.Writer, s Scenario) {
	if len(s.Statements) == 0 {
		return
	}
	fmt.Fprintf(
		w,
		"\n%s: PostgreSQL statements per %s (pg_stat_statements: execution and planning time; shared buffers per call)\n",
		s.Name,
		unitName(s),
	)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "calls\tµs\trows/call\tbuffers hit/call\tread/call\tstatement")
	var calls, micros float64
	for _, st := range s.Statements {
		calls += st.CallsPerUnit
		micros += st.MicrosPerUnit
		fmt.Fprintf(
			tw,
			"%.2f\t%.1f\t%.1f\t%.1f\t%.2f\t%s\n",
			st.CallsPerUnit,
			st.MicrosPerUnit,
			st.RowsPerCall,
			st.BlksHitPerCall,
			st.BlksReadPerCall,
			st.Query,
		)
	}
	fmt.Fprintf(tw, "%.2f\t%.1f\t\t\t\tall\n", calls, micros)
	tw.Flush()
}
