package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// RetentionEvery is how often each shard's event and audit partitions are
// kept: the days ahead made, those past the retention dropped.
const RetentionEvery = time.Hour

// RetentionArgs asks for one shard's event, delivery, attempt and audit log
// partitions to be kept (webhook.KeepPartitions, then audit.KeepPartitions).
type RetentionArgs struct {
	Shard string `json:"shard"`
}

// Kind is the stable job kind stored in river_job.
func (RetentionArgs) Kind() string { return "event.retention" }

// RetentionWorker keeps a shard's partitions for the event retention.
type RetentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	Directory *tenant.Directory
	Retention time.Duration
	Log       *slog.Logger
}

// Work runs on the shard's own pool, the Citus coordinator, where DDL runs.
// The audit log is kept after the events, each owner's function in a
// transaction of its own: the two lock disjoint tables and never at once, so
// they cannot deadlock each other. Either failing fails the job, which River
// runs again; what was done stays done.
func (w *RetentionWorker) Work(ctx context.Context, job *river.Job[RetentionArgs]) error {
	shard, err := w.Directory.Shards().Get(job.Args.Shard)
	if err != nil {
		return err
	}
	kept, err := webhook.KeepPartitions(ctx, shard, w.Retention, time.Now())
	if err != nil {
		return err
	}
	if kept.Made > 0 || kept.Dropped > 0 {
		w.Log.Info("event partitions kept", "shard", shard.Name, "made", kept.Made, "dropped", kept.Dropped)
	}
	audited, err := audit.KeepPartitions(ctx, shard, w.Retention, time.Now())
	if err != nil {
		return err
	}
	if audited.Made > 0 || audited.Dropped > 0 {
		w.Log.Info("audit partitions kept", "shard", shard.Name, "made", audited.Made, "dropped", audited.Dropped)
	}
	return nil
}
