package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/event"
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
// The job goes first so every event can name it: the sweeper (sweep.go) tells
// by that id whether an unfanned event still has a job coming.
func (cs *Clients) Emit(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws uuid.UUID,
	events ...event.Event,
) error {
	client := cs.For(shard.Name)
	if client == nil {
		return fmt.Errorf("no River client for shard %s", shard.Name)
	}
	if len(events) == 0 {
		return nil
	}
	outgoing := make([]webhook.Outgoing, len(events))
	ids := make([]uuid.UUID, len(events))
	for i, ev := range events {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.Type, err)
		}
		ids[i] = pmapi.NewID()
		outgoing[i] = webhook.Outgoing{ID: ids[i], Type: ev.Type, Data: data}
	}
	job, err := client.InsertTx(ctx, tx, FanoutArgs{WorkspaceID: ws, EventIDs: ids}, nil)
	if err != nil {
		return err
	}
	return webhook.InsertOutbox(ctx, tx, ws, job.Job.ID, outgoing)
}
