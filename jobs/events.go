package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// FanoutArgs asks for the events of one transaction to be fanned out to the
// webhook subscriptions that want them: one job per transaction rather than per
// event, since every job costs a fetch slot and a round of bookkeeping.
type FanoutArgs struct {
	WorkspaceID uuid.UUID   `json:"workspaceId"`
	EventIDs    []uuid.UUID `json:"eventIds,omitempty"`
	// EventID is the single event of jobs queued before EventIDs existed; they
	// may still wait in river_job when a new version starts.
	EventID uuid.UUID `json:"eventId,omitzero"`
}

// Kind is the stable job kind stored in river_job.
func (FanoutArgs) Kind() string { return "event.fanout" }

// Emit writes each event row and one fan-out job for them all in tx, so both
// commit with the change that caused them, and neither survives its rollback.
func (cs *Clients) Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...event.Event) error {
	client := cs.For(shard.Name)
	if client == nil {
		return fmt.Errorf("no River client for shard %s", shard.Name)
	}
	if len(events) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(events))
	types := make([]string, len(events))
	data := make([][]byte, len(events))
	for i, ev := range events {
		var err error
		if data[i], err = json.Marshal(ev.Data); err != nil {
			return fmt.Errorf("event %s: %w", ev.Type, err)
		}
		ids[i], types[i] = pmapi.NewID(), ev.Type
	}
	// One statement for all of them: this runs in every writing request.
	if _, err := tx.Exec(ctx, `insert into events (workspace_id, id, type, data)
		select $1::uuid, * from unnest($2::uuid[], $3::text[], $4::jsonb[])`, ws, ids, types, data); err != nil {
		return err
	}
	_, err := client.InsertTx(ctx, tx, FanoutArgs{WorkspaceID: ws, EventIDs: ids}, nil)
	return err
}

// FanoutWorker turns events into deliveries: one per event and ACTIVE
// subscription that wants it, each with its delivery job, in one transaction
// that also marks the events fanned out, so a retried job does the work once.
type FanoutWorker struct {
	river.WorkerDefaults[FanoutArgs]
	Directory *tenant.Directory
	Webhooks  webhook.Store
}

// Work fans the job's events out.
func (w *FanoutWorker) Work(ctx context.Context, job *river.Job[FanoutArgs]) error {
	ws, err := w.Directory.Get(ctx, job.Args.WorkspaceID)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return river.JobCancel(fmt.Errorf("workspace %s no longer exists", job.Args.WorkspaceID))
	}
	if err != nil {
		return err
	}
	shard, err := w.Directory.ShardOf(ws)
	if err != nil {
		return err
	}
	ids := job.Args.EventIDs
	if job.Args.EventID != uuid.Nil {
		ids = append(ids, job.Args.EventID)
	}
	_, err = w.Webhooks.Fanout(ctx, shard, ws.ID, ids...)
	return err
}
