package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/api/idempotency"
	"github.com/pmapi/pmapi/tenant"
)

// MaintenanceArgs asks for one shard's expired rows to be deleted: console
// sessions a week past expiry (kept that long so recent sign-ins can be
// audited), Idempotency-Key records past their 24-hour window, and OAuth device
// codes a day past expiry (undecided or unredeemed codes are of no further use;
// the day keeps a late poll answered expired_token rather than invalid_grant).
type MaintenanceArgs struct {
	Shard string `json:"shard"`
}

// Kind is the stable job kind stored in river_job.
func (MaintenanceArgs) Kind() string { return "maintenance.sweep" }

// MaintenanceWorker deletes expired rows of every workspace on a shard.
type MaintenanceWorker struct {
	river.WorkerDefaults[MaintenanceArgs]
	Directory *tenant.Directory
	// KeepSessions is how long past expiry a session row stays.
	KeepSessions time.Duration
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
	cutoff := time.Now().Add(-w.KeepSessions)
	for _, id := range ids {
		err := shard.Tx(ctx, id, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "delete from sessions where workspace_id = $1 and expires_at < $2", id, cutoff); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "delete from idempotency_keys where workspace_id = $1 and created_at < $2", id, time.Now().Add(-idempotency.Window)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "delete from oauth_device_codes where workspace_id = $1 and expires_at < now() - interval '1 day'", id)
			return err
		})
		if err != nil {
			return fmt.Errorf("workspace %s: %w", id, err)
		}
	}
	// User codes route the verification page to a workspace; past expiry they
	// route nowhere. The table is the directory's, beside the default shard.
	if shard == w.Directory.Shards().Default {
		if _, err := w.Directory.Pool().Exec(ctx, "delete from oauth_user_codes where expires_at < now() - interval '1 day'"); err != nil {
			return fmt.Errorf("user codes: %w", err)
		}
	}
	return nil
}
