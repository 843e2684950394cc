package workspacedata

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// EraseArgs asks for a workspace's erasure (Start queues it).
type EraseArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
}

// Kind is the stable job kind stored in river_job.
func (EraseArgs) Kind() string { return "workspace.erase" }

// EraseWorker runs erasures (Erase); jobs registers it on every River client.
type EraseWorker struct {
	river.WorkerDefaults[EraseArgs]
	Directory *tenant.Directory
}

// Timeout gives a large workspace room: the client's default is the webhook
// jobs' short one. It is also how long River's rescuer leaves the job of a
// killed worker alone, so it is not longer: a run cut off keeps every batch
// it committed, and its retry resumes after its last table.
func (w *EraseWorker) Timeout(*river.Job[EraseArgs]) time.Duration { return 10 * time.Minute }

// Work runs the erasure; while another job of the workspace still runs, it
// waits for it by snoozing, which costs no attempt.
func (w *EraseWorker) Work(ctx context.Context, job *river.Job[EraseArgs]) error {
	err := Erase(ctx, w.Directory, job.Args.WorkspaceID)
	if errors.Is(err, errJobsRunning) {
		return river.JobSnooze(2 * time.Second)
	}
	if err != nil {
		recordError(ctx, w.Directory, job.Args.WorkspaceID, err)
	}
	return err
}

// inserter queues the erasure's job inside Start's transaction on the
// directory. It is River's insert-only client (no pool: it inserts only in
// the transactions it is handed), so the API process and `pmapi admin`,
// which have no working clients, can start an erasure; the working clients
// of the directory's shard run it.
var inserter = sync.OnceValues(func() (*river.Client[pgx.Tx], error) {
	return river.NewClient(riverpgxv5.New(nil), &river.Config{Schema: migrations.RiverSchema})
})

func enqueue(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	client, err := inserter()
	if err != nil {
		return err
	}
	_, err = client.InsertTx(ctx, tx, EraseArgs{WorkspaceID: id},
		&river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}})
	return err
}
