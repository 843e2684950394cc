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
func (st Store) LoadFanout(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ids []uuid.UUID) ([]Event, []Subscription, error) {
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
		storekit.QueueRows(b, &subs, scanSub, "select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.status = 'ACTIVE' order by s.id", ws)
	})
	return evs, subs, err
}

// The outbox's statements name one event each by its whole primary key, one
// statement per event, in batches that turn sequential scans off for their
// transaction (docs/decisions.md, "The webhook outbox's plans"). The table is
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
	loadEventSQL   = "select id, type, data, occurred_at, fanned_out_at is not null from events where workspace_id = $1 and id = $2"
	deleteEventSQL = "delete from events where workspace_id = $1 and id = $2"
)

// outboxOrder is ids sorted (time order: they are UUIDv7) without repeats.
func outboxOrder(ids []uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(out)
}
