package migrations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

// TestTaskSearchBackfill: migration 0015 moves the text of tasks that exist
// already into task_search, where search finds it, under row-level security.
func TestTaskSearchBackfill(t *testing.T) {
	ctx := context.Background()
	admin := testdb.AdminURL(t)
	name := fmt.Sprintf("pmapi_bf_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := pgcluster.CreateDatabase(ctx, admin, name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pgcluster.DropDatabase(context.Background(), admin, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	if err := migrations.ApplyThrough(ctx, db.OwnerURL, 14); err != nil {
		t.Fatal(err)
	}
	ws, prj, described, bare := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	owner, err := pgx.Connect(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	err = testdb.InWorkspace(t, owner, ws.String(), func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"insert into workspaces (id, name, console_client_id) values ($1, 'w', $2)", []any{ws, ws.String()}},
			{"insert into projects (workspace_id, id, name) values ($1, $2, 'p')", []any{ws, prj}},
			{"insert into tasks (workspace_id, id, project_id, title, description) values " +
				"($1, $2, $3, 'Calibrate torque wrenches', 'on line seven'), ($1, $4, $3, 'Order sensors', null)",
				[]any{ws, described, prj, bare}},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
				return fmt.Errorf("%s: %w", q.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatal(err)
	}

	app, err := pgx.Connect(ctx, db.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	read := func(workspace uuid.UUID) map[uuid.UUID]string {
		got := map[uuid.UUID]string{}
		err := testdb.InWorkspace(t, app, workspace.String(), func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `select id, title || ' / ' || coalesce(description, '-') || ' / ' ||
				(search_doc @@ to_tsquery('english', 'seven'))::text from task_search where workspace_id = $1`, workspace)
			if err != nil {
				return err
			}
			var id uuid.UUID
			var s string
			_, err = pgx.ForEachRow(rows, []any{&id, &s}, func() error {
				got[id] = s
				return nil
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := read(ws)
	if got[described] != "Calibrate torque wrenches / on line seven / true" || got[bare] != "Order sensors / - / false" ||
		len(got) != 2 {
		t.Errorf("task_search after the migration: %v", got)
	}
	if other := read(uuid.New()); len(other) != 0 {
		t.Errorf("another workspace reads %v", other)
	}
}
