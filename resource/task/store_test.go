package task_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/storetest"
	"github.com/pmapi/pmapi/resource/task"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestRolledBackTaskChangeLeavesNoRowEventOrJob(t *testing.T) {
	ctx := context.Background()
	f, p := inProject(t, "task rollback")
	counts := func() (tasks, events, jobsQueued int, status string) {
		events, jobsQueued = f.Written(t, func(b *pgx.Batch) {
			b.Queue("select count(*), coalesce(min(status), '') from tasks where workspace_id = $1", f.WS).
				QueryRow(func(r pgx.Row) error { return r.Scan(&tasks, &status) })
		})
		return tasks, events, jobsQueued, status
	}

	failing, working := task.Store{Events: storetest.FailAfterEmit{Real: f.Events}}, task.Store{Events: f.Events}
	in := task.NewTask{ProjectID: p.ID, Title: "doomed", Priority: 3}
	if _, err := failing.Create(ctx, f.Shard, f.WS, in); !errors.Is(err, storetest.ErrLate) {
		t.Fatalf("Create returned %v, want the late failure", err)
	}
	if n, e, j, _ := counts(); n != 0 || e != 0 || j != 0 {
		t.Fatalf("after a rolled-back create: %d tasks, %d events, %d jobs; want none", n, e, j)
	}
	created, err := working.Create(ctx, f.Shard, f.WS, in)
	if err != nil {
		t.Fatal(err)
	}
	done := task.Done
	if _, err := failing.Update(ctx, f.Shard, f.WS, created.ID, task.Changes{Status: &done}); !errors.Is(
		err,
		storetest.ErrLate,
	) {
		t.Fatalf("Update returned %v, want the late failure", err)
	}
	if n, e, j, s := counts(); n != 1 || e != 1 || j != 1 || s != task.Todo {
		t.Fatalf("after a rolled-back update: %d tasks in %s, %d events, %d jobs; want the create's alone", n, s, e, j)
	}
	if _, err := failing.DoAtomic(ctx, f.Shard, f.WS, []task.Op{{Kind: task.OpCreate, New: in}}); !errors.Is(
		err,
		storetest.ErrLate,
	) {
		t.Fatalf("DoAtomic returned %v, want the late failure", err)
	}
	if n, e, j, _ := counts(); n != 1 || e != 1 || j != 1 {
		t.Fatalf("after a rolled-back batch: %d tasks, %d events, %d jobs", n, e, j)
	}
}
