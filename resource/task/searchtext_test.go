package task_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/storetest"
	"github.com/pmapi/pmapi/resource/task"
)

// searchRow is a task's row in task_search as the server's role sees it in
// ws, and its xmin: the transaction that last wrote it.
type searchRow struct {
	title string
	desc  *string
	xmin  string
}

func readSearchRow(t *testing.T, f storetest.Fixture, ws, id uuid.UUID) (searchRow, bool) {
	t.Helper()
	var r searchRow
	err := f.Shard.Tx(context.Background(), ws, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `select title, description, xmin::text from task_search
			where workspace_id = $1 and id = $2`, ws, id).
			Scan(&r.title, &r.desc, &r.xmin)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

// TestTaskSearchTextFollowsTheTextAlone: the store writes a task's search row
// with the task and again only when its title or description changes, so a
// status change leaves the row (its tsvector and GIN entries) alone; the row
// goes with its task and no other workspace sees it.
func TestTaskSearchTextFollowsTheTextAlone(t *testing.T) {
	ctx := context.Background()
	f, p := inProject(t, "task search text")
	tasks := task.Store{Events: event.Discard{}}
	desc := "on line seven"
	tk, err := tasks.Create(
		ctx,
		f.Shard,
		f.WS,
		task.NewTask{ProjectID: p.ID, Title: "Calibrate the torque wrench", Description: &desc, Priority: 3},
	)
	if err != nil {
		t.Fatal(err)
	}
	created, ok := readSearchRow(t, f, f.WS, tk.ID)
	if !ok || created.title != "Calibrate the torque wrench" || created.desc == nil || *created.desc != desc {
		t.Fatalf("after create: %+v (found %v)", created, ok)
	}

	inProgress, priority := task.InProgress, 1
	started := task.Changes{Status: &inProgress, Priority: &priority}
	if _, err := tasks.Update(ctx, f.Shard, f.WS, tk.ID, started); err != nil {
		t.Fatal(err)
	}
	if r, _ := readSearchRow(t, f, f.WS, tk.ID); r.xmin != created.xmin {
		t.Errorf("a status and priority change rewrote the search row (xmin %s, was %s)", r.xmin, created.xmin)
	}

	title := "Inspect the conveyor belt"
	if _, err := tasks.Update(ctx, f.Shard, f.WS, tk.ID, task.Changes{Title: &title}); err != nil {
		t.Fatal(err)
	}
	retitled, _ := readSearchRow(t, f, f.WS, tk.ID)
	if retitled.title != title || retitled.xmin == created.xmin {
		t.Errorf("after a title change: %+v", retitled)
	}
	var none *string
	if _, err := tasks.Update(ctx, f.Shard, f.WS, tk.ID, task.Changes{Description: &none}); err != nil {
		t.Fatal(err)
	}
	if r, _ := readSearchRow(t, f, f.WS, tk.ID); r.desc != nil || r.title != title {
		t.Errorf("after clearing the description: %+v", r)
	}

	if _, ok := readSearchRow(t, f, uuid.New(), tk.ID); ok {
		t.Error("another workspace sees the task's search row")
	}

	err = f.Shard.Tx(ctx, f.WS, func(tx pgx.Tx) error {
		_, err := task.RemoveInProject(ctx, tx, f.WS, p.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := readSearchRow(t, f, f.WS, tk.ID); ok {
		t.Errorf("the search row outlived its task: %+v", r)
	}
}
