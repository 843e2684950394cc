package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/madeup"
)

// apiSeedTasks is how many tasks the API's batch endpoint creates; the rest of
// -tasks are copied in (bulkTasks), which takes seconds where the API would
// take minutes.
const apiSeedTasks = 10_000

// searchWords are the words of the bulk tasks' titles and descriptions: made
// up, so their trigrams are as varied as real words'; 4,000 of them, so a word
// is in about one task in 250 (title or description). The search scenarios
// ask for one at random. With 800 words (one task in 50) a search ranked
// about 2,000 tasks and PostgreSQL spent 21 ms of CPU on it.
var searchWords = madeup.Words(18, 4000)

// seedText is n of searchWords, a task's title or description; the tasks the
// API creates get the same text as the copied ones, so a search finds as much
// at 10,000 tasks as at 100,000, a tenth of it.
func seedText(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = searchWords[r.IntN(len(searchWords))]
	}
	return strings.Join(w, " ")
}

// superuser connects as the database's superuser, past row-level security,
// which refuses COPY, for seeding the bench workspace it returns.
func (b *bench) superuser(ctx context.Context) (*pgx.Conn, uuid.UUID, error) {
	ws, err := uuid.Parse(b.workspaceID)
	if err != nil {
		return nil, ws, err
	}
	conn, err := pgx.Connect(ctx, b.cl.db.AdminURL)
	return conn, ws, err
}

// bulkTasks copies n tasks into the bench workspace as the database's
// superuser (past row-level security, which refuses COPY): rows as the API
// writes them (time-ordered ids, the projects' own, TODO or IN_PROGRESS,
// a title and a description).
func (b *bench) bulkTasks(ctx context.Context, n int) error {
	conn, ws, err := b.superuser(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	projects := make([]uuid.UUID, len(b.projects))
	for i, p := range b.projects {
		if projects[i], err = pmapi.ParseID(pmapi.ProjectIDPrefix, p, "project"); err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	statuses := []string{"TODO", "IN_PROGRESS"}
	rows := make([][]any, 0, n)
	docs := make([][]any, 0, n)
	now := time.Now()
	for i := range n {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		desc, title := seedText(r, 12), seedText(r, 4)
		title = strings.ToUpper(title[:1]) + title[1:]
		rows = append(rows, []any{ws, id, projects[i%len(projects)], title, &desc, statuses[i%2], 1 + i%5, now, now})
		docs = append(docs, []any{ws, id, title, &desc})
		b.tasks = append(b.tasks, pmapi.FormatID(pmapi.TaskIDPrefix, id))
		b.statuses = append(b.statuses, statuses[i%2])
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"tasks"},
		[]string{
			"workspace_id", "id", "project_id", "title", "description", "status", "priority", "created_at", "updated_at",
		},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy tasks: %w", err)
	}
	// Their text for search, as the task store writes it (migration 0015).
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"task_search"}, []string{"workspace_id", "id", "title", "description"},
		pgx.CopyFromRows(docs)); err != nil {
		return fmt.Errorf("copy task_search: %w", err)
	}
	return nil
}

// vacuumTasks does what autovacuum would do after the seed, before the
// scenarios: VACUUM moves the new rows from the GIN indexes' pending lists
// into the indexes (a search reads a pending list whole: at 10,000 tasks
// without it PostgreSQL spent 5.9 ms a search, against 3.0 ms at 100,000
// with it), ANALYZE gives the planner the table's statistics.
func (b *bench) vacuumTasks(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, b.cl.db.AdminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "vacuum analyze tasks, task_search")
	return err
}

// searchURL is a search for one of the bulk tasks' words.
func (b *bench) searchURL() string {
	return b.base + "/openapi/v1/resource/search?types=task&limit=20&q=" + searchWords[rand.IntN(len(searchWords))]
}

// filteredListURL is a page of one project's tasks in one status.
func (b *bench) filteredListURL() string {
	return b.base + "/openapi/v1/resource/task/list?limit=50&status=IN_PROGRESS&projectId=" + url.QueryEscape(
		b.projects[rand.IntN(len(b.projects))],
	)
}
