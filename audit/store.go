package audit

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// Record appends the entry of a change to workspace ws inside tx, the
// change's own transaction, as made by the origin ctx carries. It sends one
// round trip: the workspace's stream row (the parent an erasure deletes) if
// it has none yet, and the entry.
func Record(ctx context.Context, tx pgx.Tx, ws uuid.UUID, action string, target Target) error {
	o := OriginOf(ctx)
	b := &pgx.Batch{}
	b.Queue(`insert into audit_streams (workspace_id) values ($1) on conflict (workspace_id) do nothing`, ws)
	b.Queue(`insert into audit_log (workspace_id, id, actor_type, actor_id, action, target_type, target_id, ip, request_id)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		ws, pmapi.NewID(), o.Actor.Type, o.Actor.ID, action, target.Type, target.ID, empty(o.IP), empty(o.RequestID))
	return tx.SendBatch(ctx, b).Close()
}

// empty stores "" as null: an entry made outside a request has no address.
func empty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Filter selects a page of the log: newest first, below the id Before (the
// page's cursor) when set, only Action when set, none older than Since when
// set, at most Limit entries.
type Filter struct {
	Action string
	Since  *time.Time
	Before *uuid.UUID
	Limit  int
}

// List reads a page of workspace ws's log.
func List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter) ([]Entry, error) {
	var entries []Entry
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select id, at, actor_type, actor_id, action, target_type, target_id, ip, request_id
			from audit_log where workspace_id = $1
			and ($2::text is null or action = $2)
			and ($3::timestamptz is null or at >= $3)
			and ($4::uuid is null or id < $4)
			order by id desc limit $5`, ws, empty(f.Action), f.Since, f.Before, f.Limit).
			Query(func(rows pgx.Rows) (err error) {
				entries, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
					var e Entry
					err := r.Scan(&e.ID, &e.At, &e.Actor.Type, &e.Actor.ID, &e.Action, &e.Target.Type, &e.Target.ID,
						&e.IP, &e.RequestID)
					return e, err
				})
				return err
			})
	})
	return entries, err
}
