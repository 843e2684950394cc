package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/tenant"
)

// SessionCleanupArgs asks for expired console sessions to be deleted from one
// shard. Rows are kept for a week past expiry so recent sign-ins can be audited.
type SessionCleanupArgs struct {
	Shard string `json:"shard"`
}

// Kind is the stable job kind stored in river_job.
func (SessionCleanupArgs) Kind() string { return "sessions.cleanup" }

// SessionCleanupWorker deletes sessions that expired more than Keep ago.
type SessionCleanupWorker struct {
	river.WorkerDefaults[SessionCleanupArgs]
	Directory *tenant.Directory
	Keep      time.Duration
}

// Work walks the shard's workspaces one transaction each: row-level security
// admits no cross-workspace delete, by design.
func (w *SessionCleanupWorker) Work(ctx context.Context, job *river.Job[SessionCleanupArgs]) error {
	shard, err := w.Directory.Shards().Get(job.Args.Shard)
	if err != nil {
		return err
	}
	ids, err := w.Directory.WorkspacesOn(ctx, shard.Name)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-w.Keep)
	for _, id := range ids {
		err := shard.Tx(ctx, id, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "delete from sessions where workspace_id = $1 and expires_at < $2", id, cutoff)
			return err
		})
		if err != nil {
			return fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	return nil
}
