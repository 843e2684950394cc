package webhook

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

// Event is an event to fan out.
type Event struct {
	ID         uuid.UUID
	Type       string
	Data       []byte
	OccurredAt time.Time
}

// LoadFanout reads, in one round trip, the events among ids that are not
// fanned out yet, in the order they were emitted (ids are time-ordered and
// made in that order), and the workspace's ACTIVE subscriptions. The events
// table is an outbox: a fan-out deletes its events when it records their
// deliveries (RecordFanout), so what is left is what waits; rows marked
// fanned_out_at by versions before that are skipped.
func (st Store) LoadFanout(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	ids []uuid.UUID,
) ([]Event, []Subscription, error) {
	var evs []Event
	var subs []Subscription
	err := shard.ReadWith(ctx, ws, keyLookups, func(b *pgx.Batch) {
		for _, id := range outboxOrder(ids) {
			b.Queue(loadEventSQL, ws, id).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var e Event
					var marked bool
					if err := rows.Scan(&e.ID, &e.Type, &e.Data, &e.OccurredAt, &marked); err != nil {
						return err
					}
					if !marked {
						evs = append(evs, e)
					}
				}
				return rows.Err()
			})
		}
		storekit.QueueRows(
			b,
			&subs,
			scanSub,
			"select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.status = 'ACTIVE' order by s.id",
			ws,
		)
	})
	return evs, subs, err
}

// The outbox's statements name one event each by its whole primary key, one
// statement per event, in batches that turn sequential scans off for their
// transaction (docs/decisions/webhook-outbox.md). The table is
// nearly empty after every vacuum and full of dead rows between two, and pgx's
// prepared statements run PostgreSQL's cached generic plan after five calls
// on a connection, made with the statistics of that moment: for a list of ids
// (`id in ($2, $3)`, `id = any($2)`) that plan put only workspace_id in the
// index condition and walked every entry of the workspace, dead ones included;
// and with the one or two live rows the last vacuum counted, the planner takes
// a key lookup for pages of dead entries per live row and prefers to read the
// whole heap. An equality on every column of the key is always an index
// condition, and without sequential scans it is the only plan left.
//
// KeyLookups holds in every batch of the outbox's statements: in the
// workspace's own statement where the batch is sent whole (ReadWith,
// BatchWith), first in the batch in a transaction.
var KeyLookups = tenant.MustLocalSetting("enable_seqscan", "off")

var keyLookups = []tenant.LocalSetting{KeyLookups}

const (
	loadEventSQL = "select id, type, data, occurred_at, fanned_out_at is not null " +
		"from events where workspace_id = $1 and id = $2"
	deleteEventSQL = "delete from events where workspace_id = $1 and id = $2"
)

// outboxOrder is ids sorted (time order: they are UUIDv7) without repeats.
func outboxOrder(ids []uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(out)
}

// Outgoing is an event as its change's transaction writes it to the outbox:
// its id, type and payload as JSON.
type Outgoing struct {
	ID   uuid.UUID
	Type string
	Data []byte
}

// InsertOutbox writes events as outbox rows of workspace ws in tx, each naming
// fanoutJob, the River job that will fan them out: the sweeper tells by that
// id whether an event that waits still has a job coming (Unfanned). The same
// statement appends them to the event log with their workspace's next numbers
// (pmapi_emit_events, migration 0022; docs/decisions/event-feed.md), so the
// log costs a write no statement and no round trip of its own. The numbers'
// row stays locked until tx ends: a workspace's writes that emit commit one
// after another from this statement on, which is what makes the feed's
// cursor gap-free.
func InsertOutbox(ctx context.Context, tx pgx.Tx, ws uuid.UUID, fanoutJob int64, events []Outgoing) error {
	if len(events) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(events))
	types := make([]string, len(events))
	datas := make([][]byte, len(events))
	for i, ev := range events {
		ids[i], types[i], datas[i] = ev.ID, ev.Type, ev.Data
	}
	_, err := tx.Exec(ctx, emitEventsSQL, ws, fanoutJob, ids, types, datas)
	return err
}

const emitEventsSQL = "select pmapi_emit_events($1, $2, $3, $4, $5::jsonb[])"

// Waiting is an outbox event not fanned out yet, and the job it names
// (nil for one written before events named their job).
type Waiting struct {
	ID  uuid.UUID
	Job *int64
}

// Unfanned reads up to limit of the workspace's events that still wait for
// their fan-out longer than after since they were written, oldest first.
func (st Store) Unfanned(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	after time.Duration,
	limit int,
) ([]Waiting, error) {
	var found []Waiting
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		storekit.QueueRows(b, &found, func(row pgx.Row) (Waiting, error) {
			var w Waiting
			return w, row.Scan(&w.ID, &w.Job)
		}, `select id, fanout_job_id from events where workspace_id = $1 and fanned_out_at is null
			and occurred_at < now() - make_interval(secs => $2) order by occurred_at limit $3`, ws, after.Seconds(), limit)
	})
	return found, err
}

// Reassign makes the events ids name fanoutJob, a job queued again in tx for
// them, so the next sweep leaves them to it. One statement per event, by its
// whole key and without sequential scans, as the fan-out reads and deletes
// them (LoadFanout): a list of ids can be planned as a walk over every outbox
// entry of the workspace, dead ones included.
func Reassign(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws uuid.UUID,
	ids []uuid.UUID,
	fanoutJob int64,
) error {
	b := &pgx.Batch{}
	shard.QueueLocalSetting(b, KeyLookups)
	for _, id := range ids {
		b.Queue("update events set fanout_job_id = $3 where workspace_id = $1 and id = $2", ws, id, fanoutJob)
	}
	return tx.SendBatch(ctx, b).Close()
}
