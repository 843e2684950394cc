package task_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/task"
)

// TestListJSONIsGetsView: the list page and the detail, written from
// PostgreSQL's wire values (storekit.RowJSON), are byte for byte
// encoding/json's encoding of the view of what Get scans, null or not,
// newest first; so the columns the statement returns are the ones the
// writer reads, in its order, types and formats.
func TestListJSONIsGetsView(t *testing.T) {
	ctx := context.Background()
	f, p := inProject(t, "task list json")
	user := uuid.New()
	if err := f.Shard.Tx(ctx, f.WS, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `insert into users (workspace_id, id, email, name)
			values ($1, $2, 'u@example.com', 'U')`, f.WS, user)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	store := task.Store{Events: event.Discard{}}
	var ids []uuid.UUID
	for i := range 4 {
		in := task.NewTask{ProjectID: p.ID, Title: fmt.Sprint("task <", i, "> & \u2028"), Priority: 1 + i}
		if i%2 == 0 {
			desc := fmt.Sprint("description\n\"", i, "\"")
			start, due := time.Date(
				2026,
				1,
				1+i,
				0,
				0,
				0,
				120_000_000,
				time.UTC,
			), time.Date(
				2026,
				2,
				1+i,
				0,
				0,
				0,
				123_456_000,
				time.UTC,
			)
			in.Description, in.StartDate, in.DueDate, in.AssigneeID, in.ReporterID = &desc, &start, &due, &user, &user
		}
		created, err := store.Create(ctx, f.Shard, f.WS, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]uuid.UUID{created.ID}, ids...)
	}
	var page jsonw.Rows
	if err := store.List(ctx, f.Shard, f.WS, task.Filter{Limit: 10}, &page); err != nil || page.Len() != 4 {
		t.Fatalf("List: %d tasks, %v", page.Len(), err)
	}
	var want []byte
	for i, id := range ids {
		row, err := store.Get(ctx, f.Shard, f.WS, id)
		if err != nil {
			t.Fatal(err)
		}
		view, _ := json.Marshal(task.ToView(row))
		if i > 0 {
			want = append(want, ',')
		}
		want = append(want, view...)
		detail, err := store.Detail(ctx, f.Shard, f.WS, row.ID, nil)
		if err != nil || string(detail) != string(view) {
			t.Errorf("detail %s, %v\nwant %s", detail, err, view)
		}
	}
	if string(page.B) != string(want) {
		t.Errorf("list\n got %s\nwant %s", page.B, want)
	}
}
