package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// Sweep defaults: an event whose fan-out has not run a minute after it
// committed is looked at once a minute.
const (
	DefaultSweepEvery = time.Minute
	DefaultSweepAfter = time.Minute
)

// sweepBatch caps the events one workspace re-queues per sweep; the next sweep
// takes the rest.
const sweepBatch = 1000

var (
	eventsRequeued = promauto.NewCounter(prometheus.CounterOpts{
		Name: "pmapi_events_refanned_total",
		Help: "Events whose fan-out job was gone (a coordinator lost it between commits, or it was discarded) " +
			"and that the sweeper queued again.",
	})
	retriesRequeued = promauto.NewCounter(prometheus.CounterOpts{
		Name: "pmapi_webhook_retries_requeued_total",
		Help: "Subscriptions with overdue waiting deliveries whose retry job was gone and that the sweeper gave a new one.",
	})
)

// SweepArgs asks for one shard's events that are still unfanned and have no
// live fan-out job to be queued for fan-out again.
type SweepArgs struct {
	Shard string `json:"shard"`
}

// Kind is the stable job kind stored in river_job.
func (SweepArgs) Kind() string { return "event.sweep" }

// SweepWorker keeps the promise that no committed change loses its event
// (docs/decisions/tenancy-and-citus.md, "A sweeper re-queues lost fan-outs").
// On Citus a transaction that ran on a node other than its workspace's (a
// stale route, routing off) commits its River job on that node and its change
// on the workspace's, in one phase each, so a node that dies between the two
// commits leaves events with no job. Events remember their job (Emit); an
// event still unfanned After its commit whose job is neither waiting nor
// running on any node is queued again. Fan-out is idempotent, so a job that was
// only slow costs a no-op.
//
// The same holds for a subscription's retry job: a subscription whose waiting
// deliveries are overdue by After and whose retry job is neither waiting nor
// running gets a new one.
type SweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	Directory *tenant.Directory
	Clients   *Clients
	Webhooks  webhook.Store
	After     time.Duration
	Log       *slog.Logger
}

// Timeout leaves room for a shard with many workspaces: one read each.
func (w *SweepWorker) Timeout(*river.Job[SweepArgs]) time.Duration { return 10 * time.Minute }

// Work walks the shard's workspaces: row-level security admits no statement
// across workspaces, and on Citus each one is a single-shard read.
func (w *SweepWorker) Work(ctx context.Context, job *river.Job[SweepArgs]) error {
	shard, err := w.Directory.Shards().Get(job.Args.Shard)
	if err != nil {
		return err
	}
	client := w.Clients.For(shard.Name)
	workspaces, err := w.Directory.WorkspacesOn(ctx, shard.Name)
	if err != nil {
		return err
	}
	for _, ws := range workspaces {
		n, err := w.sweep(ctx, shard, client, ws)
		if err != nil {
			return fmt.Errorf("workspace %s: %w", ws, err)
		}
		if n > 0 {
			eventsRequeued.Add(float64(n))
			w.Log.Warn("events without a fan-out job queued again", "workspace_id", ws, "events", n)
		}
		if n, err = w.sweepRetries(ctx, shard, client, ws); err != nil {
			return fmt.Errorf("workspace %s: %w", ws, err)
		}
		if n > 0 {
			retriesRequeued.Add(float64(n))
			w.Log.Warn("subscriptions without a retry job given one again", "workspace_id", ws, "subscriptions", n)
		}
	}
	return nil
}

// live returns which of ids name a job that will still run, on any node of
// shard whose River tables may hold it (job ids are the cluster's, each node
// numbering from its own range: migrations.jobIDBits).
func (w *SweepWorker) live(ctx context.Context, shard string, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	for _, client := range w.Clients.all(shard) {
		res, err := client.JobList(ctx, river.NewJobListParams().IDs(ids...).States(liveStates...).First(len(ids)))
		if err != nil {
			return nil, err
		}
		for _, j := range res.Jobs {
			out[j.ID] = true
		}
	}
	return out, nil
}

func (w *SweepWorker) sweepRetries(
	ctx context.Context,
	shard *tenant.Shard,
	client *river.Client[pgx.Tx],
	ws uuid.UUID,
) (int, error) {
	overdue, err := w.Webhooks.Overdue(ctx, shard, ws, w.After)
	if err != nil || len(overdue) == 0 {
		return 0, err
	}
	var ids []int64
	for _, job := range overdue {
		if job != nil {
			ids = append(ids, *job)
		}
	}
	alive, err := w.live(ctx, shard.Name, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	for sub, job := range overdue {
		if job != nil && alive[*job] {
			continue
		}
		if err := w.Webhooks.Requeue(ctx, shard, ws, sub, job); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// liveStates are the job states in which a fan-out job will still run.
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

func (w *SweepWorker) sweep(
	ctx context.Context,
	shard *tenant.Shard,
	client *river.Client[pgx.Tx],
	ws uuid.UUID,
) (int, error) {
	found, err := w.Webhooks.Unfanned(ctx, shard, ws, w.After, sweepBatch)
	if err != nil || len(found) == 0 {
		return 0, err
	}
	var jobIDs []int64
	for _, u := range found {
		if u.Job != nil {
			jobIDs = append(jobIDs, *u.Job)
		}
	}
	alive, err := w.live(ctx, shard.Name, jobIDs)
	if err != nil {
		return 0, err
	}
	var orphans []uuid.UUID
	for _, u := range found {
		if u.Job == nil || !alive[*u.Job] {
			orphans = append(orphans, u.ID)
		}
	}
	if len(orphans) == 0 {
		return 0, nil
	}
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		res, err := client.InsertTx(ctx, tx, FanoutArgs{WorkspaceID: ws, EventIDs: orphans}, nil)
		if err != nil {
			return err
		}
		return webhook.Reassign(ctx, tx, shard, ws, orphans, res.Job.ID)
	})
	return len(orphans), err
}
