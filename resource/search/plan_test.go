package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/internal/madeup"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/tenant"
)

// planRows is how many rows each searched table gets: enough that reading a
// whole table costs the planner more than its indexes, few enough to seed in
// a second.
const planRows = 10000

var everySource = []facet.Search{project.SearchSource, task.SearchSource, risk.SearchSource, note.SearchSource,
	actionitem.SearchSource, rrca.SearchSource}

// seedText is text like the API's: a few common words and many rarer ones
// (made up, so their trigrams are as varied as real words').
type seedText struct {
	r     *rand.Rand
	vocab []string
}

var commonWords = strings.Fields(`pump valve motor bearing line press furnace conveyor sensor supplier
	delay install replace inspect calibrate order review update weld paint audit drawing test spare
	gearbox shaft coupling hose filter fan panel cable switch relay fuse guard label manual training
	safety quality cost schedule budget vendor shipment drawing release approval meeting report`)

func newSeedText() seedText {
	return seedText{r: rand.New(rand.NewPCG(1, 18)), vocab: madeup.Words(1, 3000)}
}

func (s seedText) words(n int) string {
	w := make([]string, n)
	for i := range w {
		if s.r.IntN(3) == 0 {
			w[i] = commonWords[s.r.IntN(len(commonWords))]
		} else {
			w[i] = s.vocab[s.r.IntN(len(s.vocab))]
		}
	}
	return strings.Join(w, " ")
}

// seedTable inserts n rows with the given ids through the server's
// role, in multi-row VALUES (Citus refuses INSERT ... SELECT into a table with
// row-level security). row returns the values after workspace_id and id.
func seedTable(
	ctx context.Context,
	tx pgx.Tx,
	ws uuid.UUID,
	table string,
	n int,
	cols []string,
	ids []uuid.UUID,
	row func(i int) []any,
) error {
	const chunk = 500
	for start := 0; start < n; start += chunk {
		var sb strings.Builder
		args := []any{ws}
		fmt.Fprintf(&sb, "insert into %s (workspace_id, id, %s) values ", table, strings.Join(cols, ", "))
		for i := start; i < start+chunk; i++ {
			if i > start {
				sb.WriteString(", ")
			}
			args = append(args, ids[i])
			fmt.Fprintf(&sb, "($1, $%d", len(args))
			for _, v := range row(i) {
				args = append(args, v)
				fmt.Fprintf(&sb, ", $%d", len(args))
			}
			sb.WriteString(")")
		}
		if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return nil
}

var seqScan = regexp.MustCompile(`Seq Scan on (\w+)`)

// TestSearchPlansUseIndexes seeds every searched table and reads the plan of
// searches (words, a typo, each filter, a later page) as the server's role in
// the workspace's transaction: a sequential scan of a searched table fails.
func TestSearchPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	ws, prj := uuid.New(), uuid.New()
	txt := newSeedText()
	title := func(i int) string {
		if i%500 == 7 {
			return "Replace the seal " + txt.words(2)
		}
		return strings.ToUpper(txt.words(1)[:1]) + txt.words(4)
	}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into projects (workspace_id, id, name) values ($1, $2, 'Seeded')",
			ws, prj); err != nil {
			return err
		}
		// A task's text is in task_search too, as the store writes it.
		taskText := make([][]any, planRows)
		seeds := []struct {
			table string
			cols  []string
			row   func(int) []any
		}{
			{"projects", []string{"name", "description"}, func(i int) []any { return []any{title(i), txt.words(12)} }},
			{"tasks", []string{"project_id", "title", "description"}, func(i int) []any {
				taskText[i] = []any{title(i), txt.words(12)}
				return append([]any{prj}, taskText[i]...)
			}},
			{"task_search", []string{"title", "description"}, func(i int) []any { return taskText[i] }},
			{
				"risks",
				[]string{"project_id", "title", "description"},
				func(i int) []any { return []any{prj, title(i), txt.words(12)} },
			},
			{"notes", []string{"project_id", "body"}, func(i int) []any { return []any{prj, title(i) + ". " + txt.words(20)} }},
			{
				"action_items",
				[]string{"project_id", "title", "description", "owner_hint"},
				func(i int) []any { return []any{prj, title(i), txt.words(12), txt.words(2)} },
			},
			{
				"rrca_analyses",
				[]string{"project_id", "title", "problem_statement"},
				func(i int) []any { return []any{prj, title(i), txt.words(12)} },
			},
		}
		ids := map[string][]uuid.UUID{}
		for _, s := range seeds {
			key := s.table
			if key == "task_search" {
				key = "tasks" // a task's search row has its task's key
			}
			if ids[key] == nil {
				for range planRows {
					ids[key] = append(ids[key], uuid.New())
				}
			}
			if err := seedTable(ctx, tx, ws, s.table, planRows, s.cols, ids[key], s.row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range everySource {
		// As autovacuum would: VACUUM moves the rows from GIN's pending list
		// into the index, which the planner otherwise reckons with scanning.
		for _, table := range []string{s.Table, s.Docs} {
			if table == "" {
				continue
			}
			if _, err := testdb.OwnerPool(t).Exec(ctx, "vacuum analyze "+table); err != nil {
				t.Fatal(err)
			}
		}
	}
	since := time.Now().Add(-time.Hour)
	searches := []struct {
		name, q string
		f       Filter
	}{
		{"a word", "seal", Filter{}},
		{"two words", "replace seal", Filter{}},
		{"a prefix", txt.vocab[100][:4], Filter{}},
		{"a typo", txt.vocab[200][:4] + "x" + txt.vocab[200][5:], Filter{}},
		{"a rare word", txt.vocab[300], Filter{}},
		{"projectId", "seal", Filter{ProjectID: &prj}},
		{"status", "seal", Filter{Status: "OPEN"}},
		{"updatedSince", "seal", Filter{UpdatedSince: &since}},
		{"a later page", "seal", Filter{After: &Key{Score: 2.5, ID: uuid.Max}}},
	}
	for _, sc := range searches {
		explainSearch(t, shard, ws, sc.name, sc.q, sc.f)
	}
}

// explain is the plan's lines of how (an EXPLAIN with its options) of sql,
// run as the server's role in ws's transaction at search's trigram threshold.
func explain(t *testing.T, shard *tenant.Shard, ws uuid.UUID, how, sql string, args []any) []string {
	t.Helper()
	ctx := context.Background()
	var plan []string
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "select set_config($1, $2, true)",
			"pg_trgm.strict_word_similarity_threshold", fmt.Sprint(minSimilarity)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, how+" "+sql, args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	return plan
}

// explainSearch fails t when the plan of a search reads a searched table
// sequentially.
func explainSearch(t *testing.T, shard *tenant.Shard, ws uuid.UUID, name, q string, f Filter) {
	t.Helper()
	sources := everySource
	if f.Status != "" {
		sources = withStatus(sources)
	}
	sql, args := query(sources, f, 51, ws, q)
	text := strings.Join(explain(t, shard, ws, "explain", sql, args), "\n")
	for _, m := range seqScan.FindAllStringSubmatch(text, -1) {
		for _, s := range sources {
			if strings.HasPrefix(m[1], s.Table) || s.Docs != "" && strings.HasPrefix(m[1], s.Docs) {
				t.Errorf("%s: the plan scans %s:\n%s", name, m[1], text)
			}
		}
	}
}

// keyLoops is how many times a plan read a task by its key.
var keyLoops = regexp.MustCompile(`Index Scan using tasks_pkey on tasks .*loops=(\d+)`)

// taskScan is a line of a plan that reads tasks.
var taskScan = regexp.MustCompile(`(Scan|Seq Scan) .*on tasks\b`)

// TestSearchReadsAHitsTaskByKey: task search finds hits in task_search and
// reads the task rows of a page's best hits by their key, without parallel
// workers. At the
// bench's 100,000 tasks, as a plain join the planner read every task for a
// hash join with the few hundred hits (7.9 ms of PostgreSQL a search against
// 2.7 ms), and then started a parallel worker for the hits (16 ms).
func TestSearchReadsAHitsTaskByKey(t *testing.T) {
	const tasks = 100_000
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	ws, prj := uuid.New(), uuid.New()
	txt := newSeedText()
	ids := make([]uuid.UUID, tasks)
	text := make([][]any, tasks)
	for i := range ids {
		ids[i] = uuid.New()
		text[i] = []any{txt.words(4), txt.words(12)}
	}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into projects (workspace_id, id, name) values ($1, $2, 'Seeded')",
			ws, prj); err != nil {
			return err
		}
		if err := seedTable(ctx, tx, ws, "tasks", tasks, []string{"project_id", "title", "description"}, ids,
			func(i int) []any { return append([]any{prj}, text[i]...) }); err != nil {
			return err
		}
		return seedTable(
			ctx,
			tx,
			ws,
			"task_search",
			tasks,
			[]string{"title", "description"},
			ids,
			func(i int) []any { return text[i] },
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testdb.OwnerPool(t).Exec(ctx, "vacuum analyze tasks, task_search"); err != nil {
		t.Fatal(err)
	}
	// A seeded word is in a few hundred tasks: its matches fill the page. A
	// query that matches no word goes on to the trigram part, which reads
	// every candidate's row (its own design, before task_search too).
	word := txt.vocab[100]
	for _, q := range []string{"seal", word, txt.vocab[200][:4]} {
		sql, args := query([]facet.Search{task.SearchSource}, Filter{}, 21, ws, q)
		plan := explain(t, shard, ws, "explain (analyze, costs off, timing off)", sql, args)
		for _, line := range plan {
			if m := keyLoops.FindStringSubmatch(line); m != nil && q == word {
				if n, _ := strconv.Atoi(m[1]); n > 21 {
					t.Errorf("q=%q: %d task rows read for a page of 21:\n%s", q, n, strings.Join(plan, "\n"))
				}
			}
			if taskScan.MatchString(line) && !strings.Contains(line, "Index Scan using tasks_pkey on tasks") ||
				strings.Contains(line, "Gather") {
				t.Errorf("q=%q: the plan reads tasks other than by a hit's key, or in parallel:\n%s", q, strings.Join(plan, "\n"))
				break
			}
		}
	}
}
