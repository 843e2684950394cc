package webhook

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		for start := 0; start < len(ids); start += maxIDs {
			chunk := ids[start:min(start+maxIDs, len(ids))]
			b.Queue("select id, type, data, occurred_at, fanned_out_at is not null from events where workspace_id = $1 and id in ("+idList(len(chunk))+
				") order by id", idArgs(ws, chunk)...).Query(func(rows pgx.Rows) error {
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
		b.Queue("select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.status = 'ACTIVE' order by s.id", ws).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					s, err := scanSub(rows)
					if err != nil {
						return err
					}
					subs = append(subs, s)
				}
				return rows.Err()
			})
	})
	return evs, subs, err
}

// maxIDs bounds the ids one statement names.
const maxIDs = 1000

// idList is the parameter list $2, $3, ... of n ids, rounded up to a power of
// two (idArgs repeats the last id) so that few statement texts exist.
//
// The events are named one by one, not by `id = any($2)`: the outbox is
// nearly empty but full of dead rows between vacuums, and the generic plan of
// `= any($2)`, which assumes ten ids, chose a sequential scan of all of them
// (explained in docs/decisions.md, Webhooks); a list of equalities on the key
// is planned as the index probes it is.
func idList(n int) string {
	if sql, ok := idLists.Load(n); ok {
		return sql.(string)
	}
	var b strings.Builder
	for i := range bucket(n) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i+2)
	}
	sql, _ := idLists.LoadOrStore(n, b.String())
	return sql.(string)
}

var idLists sync.Map

func bucket(n int) int {
	b := 1
	for b < n {
		b *= 2
	}
	return b
}

// idArgs is ws followed by ids padded to idList's length.
func idArgs(ws uuid.UUID, ids []uuid.UUID) []any {
	args := make([]any, 1, 1+bucket(len(ids)))
	args[0] = ws
	for i := range bucket(len(ids)) {
		args = append(args, ids[min(i, len(ids)-1)])
	}
	return args
}
