package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/event"
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
func (cs *Clients) Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...event.Event) error {
	client := cs.For(shard.Name)
	if client == nil {
		return fmt.Errorf("no River client for shard %s", shard.Name)
	}
	if len(events) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(events))
	data := make([]json.RawMessage, len(events))
	for i, ev := range events {
		var err error
		if data[i], err = json.Marshal(ev.Data); err != nil {
			return fmt.Errorf("event %s: %w", ev.Type, err)
		}
		ids[i] = pmapi.NewID()
	}
	job, err := client.InsertTx(ctx, tx, FanoutArgs{WorkspaceID: ws, EventIDs: ids}, nil)
	if err != nil {
		return err
	}
	// Multi-row VALUES, never INSERT ... SELECT: on Citus the latter ships its
	// rows with COPY, which row-level security refuses. One statement per
	// chunk, and nearly always one chunk: this runs in every writing request.
	for start := 0; start < len(events); start += maxEventsPerInsert {
		end := min(start+maxEventsPerInsert, len(events))
		args := make([]any, 0, 2+3*(end-start))
		args = append(args, ws, job.Job.ID)
		for i := start; i < end; i++ {
			args = append(args, ids[i], events[i].Type, data[i])
		}
		if _, err := tx.Exec(ctx, insertEvents(end-start), args...); err != nil {
			return err
		}
	}
	return nil
}

// maxEventsPerInsert keeps a statement's parameters (3 an event) far below
// PostgreSQL's 65,535; a project delete emits an event per child.
const maxEventsPerInsert = 1000

var insertEventsSQL sync.Map // row count -> statement

// insertEvents is the statement that inserts n events of one workspace ($1)
// and one fan-out job ($2).
func insertEvents(n int) string {
	if sql, ok := insertEventsSQL.Load(n); ok {
		return sql.(string)
	}
	var b strings.Builder
	b.WriteString("insert into events (workspace_id, fanout_job_id, id, type, data, occurred_at) values ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		// clock_timestamp(), not the transaction's start: the row lock the
		// change took is held by now, so a later change to the same record
		// gets a later time even when its transaction began first, and the
		// events of one transaction get increasing times in their order.
		fmt.Fprintf(&b, "($1, $2, $%d, $%d, $%d, clock_timestamp())", 3+3*i, 4+3*i, 5+3*i)
	}
	sql, _ := insertEventsSQL.LoadOrStore(n, b.String())
	return sql.(string)
}
