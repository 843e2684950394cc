package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/tenant"
)

// MaintenanceArgs asks for one shard's expired rows to be deleted. What expires
// and when is each table owner's to say: the job runs the Sweeps it is given
// (console sessions, device codes and user codes in authz, Idempotency-Key
// records in api/idempotency), so it runs no SQL of its own.
type MaintenanceArgs struct {
	Shard string `json:"shard"`
}

// Kind is the stable job kind stored in river_job.
func (MaintenanceArgs) Kind() string { return "maintenance.sweep" }

// WorkspaceSweep deletes one workspace's expired rows of the tables its
// package owns, inside the workspace's transaction.
type WorkspaceSweep func(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error

// DirectorySweep deletes expired rows of a directory table (no workspace, no
// row-level security); it runs beside the default shard only.
type DirectorySweep func(ctx context.Context, dir *tenant.Directory) error

// Sweeps are the deletions the maintenance job runs.
type Sweeps struct {
	Workspace []WorkspaceSweep
	Directory []DirectorySweep
}

// MaintenanceWorker deletes expired rows of every workspace on a shard.
type MaintenanceWorker struct {
	river.WorkerDefaults[MaintenanceArgs]
	Directory *tenant.Directory
	Sweeps    Sweeps
}

// Timeout gives a shard of many workspaces room: the client's default is the
// webhook jobs' short one (client.go).
func (w *MaintenanceWorker) Timeout(*river.Job[MaintenanceArgs]) time.Duration {
	return 10 * time.Minute
}

// Work walks the shard's workspaces one transaction each: row-level security
// admits no cross-workspace delete, by design.
func (w *MaintenanceWorker) Work(ctx context.Context, job *river.Job[MaintenanceArgs]) error {
	shard, err := w.Directory.Shards().Get(job.Args.Shard)
	if err != nil {
		return err
	}
	ids, err := w.Directory.WorkspacesOn(ctx, shard.Name)
	if err != nil {
		return err
	}
	for _, id := range ids {
		err := shard.Tx(ctx, id, func(tx pgx.Tx) error {
			for _, sweep := range w.Sweeps.Workspace {
				if err := sweep(ctx, tx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	if shard == w.Directory.Shards().Default {
		for _, sweep := range w.Sweeps.Directory {
			if err := sweep(ctx, w.Directory); err != nil {
				return fmt.Errorf("directory: %w", err)
			}
		}
	}
	return nil
}
