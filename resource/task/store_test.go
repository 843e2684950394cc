package task_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }

// failAfterEmit records the events for real, then fails: the change, its events
// and their jobs must all roll back together.
type failAfterEmit struct{ real event.Emitter }

var errLate = errors.New("failure after the event was written")

func (f failAfterEmit) Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...event.Event) error {
	if err := f.real.Emit(ctx, tx, shard, ws, events...); err != nil {
		return err
	}
	return errLate
}

func TestRolledBackTaskChangeLeavesNoRowEventOrJob(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	shards, _ := tenant.NewShards("default", shard)
	dir := tenant.NewDirectory(shards)
	clients, err := jobs.NewClients(dir, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dir.Create(ctx, "task rollback", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := project.Store{Events: event.Discard{}}.Create(ctx, shard, w.ID, project.NewProject{Name: "p", RAGStatus: project.Green})
	if err != nil {
		t.Fatal(err)
	}
	counts := func() (tasks, events, jobsQueued int, status string) {
		err := shard.Read(ctx, w.ID, func(b *pgx.Batch) {
			b.Queue("select count(*), coalesce(min(status), '') from tasks where workspace_id = $1", w.ID).
				QueryRow(func(r pgx.Row) error { return r.Scan(&tasks, &status) })
			b.Queue("select count(*) from events where workspace_id = $1", w.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&events) })
			b.Queue("select count(*) from river.river_job where kind = 'event.fanout' and args->>'workspaceId' = $1", w.ID.String()).
				QueryRow(func(r pgx.Row) error { return r.Scan(&jobsQueued) })
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}

	failing, working := task.Store{Events: failAfterEmit{clients}}, task.Store{Events: clients}
	in := task.NewTask{ProjectID: p.ID, Title: "doomed", Priority: 3}
	if _, err := failing.Create(ctx, shard, w.ID, in); !errors.Is(err, errLate) {
		t.Fatalf("Create returned %v, want the late failure", err)
	}
	if n, e, j, _ := counts(); n != 0 || e != 0 || j != 0 {
		t.Fatalf("after a rolled-back create: %d tasks, %d events, %d jobs; want none", n, e, j)
	}
	created, err := working.Create(ctx, shard, w.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	done := task.Done
	if _, err := failing.Update(ctx, shard, w.ID, created.ID, task.Changes{Status: &done}); !errors.Is(err, errLate) {
		t.Fatalf("Update returned %v, want the late failure", err)
	}
	if n, e, j, s := counts(); n != 1 || e != 1 || j != 1 || s != task.Todo {
		t.Fatalf("after a rolled-back update: %d tasks in %s, %d events, %d jobs; want the create's alone", n, s, e, j)
	}
	if _, err := failing.DoAtomic(ctx, shard, w.ID, []task.Op{{Kind: task.OpCreate, New: in}}); !errors.Is(err, errLate) {
		t.Fatalf("DoAtomic returned %v, want the late failure", err)
	}
	if n, e, j, _ := counts(); n != 1 || e != 1 || j != 1 {
		t.Fatalf("after a rolled-back batch: %d tasks, %d events, %d jobs", n, e, j)
	}
}
