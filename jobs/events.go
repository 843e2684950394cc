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

// FanoutArgs asks for one event to be fanned out to the webhook subscriptions
// that want it.
type FanoutArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	EventID     uuid.UUID `json:"eventId"`
}

// Kind is the stable job kind stored in river_job.
func (FanoutArgs) Kind() string { return "event.fanout" }

// Emit writes each event row and inserts its fan-out job in tx, so both commit
// with the change that caused them, and neither survives its rollback.
func (cs *Clients) Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...event.Event) error {
	client := cs.For(shard.Name)
	if client == nil {
		return fmt.Errorf("no River client for shard %s", shard.Name)
	}
	params := make([]river.InsertManyParams, 0, len(events))
	for _, ev := range events {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.Type, err)
		}
		id := pmapi.NewID()
		if _, err := tx.Exec(ctx, `insert into events (workspace_id, id, type, data) values ($1, $2, $3, $4)`, ws, id, ev.Type, data); err != nil {
			return err
		}
		params = append(params, river.InsertManyParams{Args: FanoutArgs{WorkspaceID: ws, EventID: id}})
	}
	if len(params) == 0 {
		return nil
	}
	_, err := client.InsertManyTx(ctx, tx, params)
	return err
}

// FanoutWorker turns an event into deliveries: one per ACTIVE subscription that
// wants it, each with its delivery job, in one transaction that also marks the
// event fanned out, so a retried job does the work once.
type FanoutWorker struct {
	river.WorkerDefaults[FanoutArgs]
	Directory *tenant.Directory
	Webhooks  webhook.Store
}

// Work fans one event out.
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
	_, err = w.Webhooks.Fanout(ctx, shard, ws.ID, job.Args.EventID)
	return err
}
