package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// matches reports whether a subscription wants an event type.
func matches(events []string, typ string) bool {
	for _, e := range events {
		if e == "*" || e == typ {
			return true
		}
	}
	return false
}

// Fanout creates one delivery per event and ACTIVE subscription of the
// workspace that wants it, with its delivery job, in one transaction; events
// already fanned out are skipped, so a repeated call adds nothing. The round
// trips are the same for one event or many: reads in one batch, deliveries in
// one insert, their jobs in one River insert, the marks in one batch.
func (st Store) Fanout(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, eventIDs ...uuid.UUID) (int, error) {
	if len(eventIDs) == 0 {
		return 0, nil
	}
	created := 0
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		created = 0
		type ev struct {
			id   uuid.UUID
			typ  string
			data []byte
		}
		type sub struct {
			id     uuid.UUID
			client string
			events []string
		}
		var evs []ev
		var subs []sub
		b := &pgx.Batch{}
		// The lock makes a concurrent run of the same job wait, then skip.
		b.Queue("select id, type, data from events where workspace_id = $1 and id = any($2) and fanned_out_at is null order by id for update",
			ws, eventIDs).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var e ev
				if err := rows.Scan(&e.id, &e.typ, &e.data); err != nil {
					return err
				}
				evs = append(evs, e)
			}
			return rows.Err()
		})
		b.Queue("select id, client_id, events from webhook_subscriptions where workspace_id = $1 and status = 'ACTIVE' order by id", ws).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var s sub
					if err := rows.Scan(&s.id, &s.client, &s.events); err != nil {
						return err
					}
					subs = append(subs, s)
				}
				return rows.Err()
			})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		var ids []uuid.UUID
		var rows [][]any
		for _, e := range evs {
			for _, s := range subs {
				if matches(s.events, e.typ) {
					id := pmapi.NewID()
					ids = append(ids, id)
					rows = append(rows, []any{id, s.id, s.client, e.id, e.typ, e.data})
				}
			}
		}
		// Multi-row VALUES, in one batch: Citus would ship INSERT ... SELECT
		// (unnest included) with COPY, which row-level security refuses.
		fresh := make(map[uuid.UUID]bool, len(ids))
		b = &pgx.Batch{}
		for start := 0; start < len(rows); start += deliveriesPerInsert {
			chunk := rows[start:min(start+deliveriesPerInsert, len(rows))]
			sql, args := insertDeliveries(ws, chunk)
			b.Queue(sql, args...).Query(func(r pgx.Rows) error {
				got, err := pgx.CollectRows(r, pgx.RowTo[uuid.UUID])
				for _, id := range got {
					fresh[id] = true
				}
				return err
			})
		}
		if b.Len() > 0 {
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
		}
		// Jobs are queued in event order, which RETURNING does not promise.
		var inserted []uuid.UUID
		for _, id := range ids {
			if fresh[id] {
				inserted = append(inserted, id)
			}
		}
		marked := make([]uuid.UUID, len(evs))
		for i, e := range evs {
			marked[i] = e.id
		}
		created = len(inserted)
		// The job ids and the marks travel in one round trip.
		b = &pgx.Batch{}
		if err := st.enqueue(ctx, tx, b, shard, ws, inserted); err != nil {
			return err
		}
		b.Queue("update events set fanned_out_at = now() where workspace_id = $1 and id = any($2)", ws, marked)
		return tx.SendBatch(ctx, b).Close()
	})
	return created, err
}

// deliveriesPerInsert bounds one INSERT's rows (six parameters each) well
// under PostgreSQL's 65535 parameters.
const deliveriesPerInsert = 1000

// insertDeliveries writes rows (id, subscription, client, event, type, data)
// as one multi-row VALUES insert; $1 is the workspace.
func insertDeliveries(ws uuid.UUID, rows [][]any) (string, []any) {
	var sql strings.Builder
	sql.WriteString(`insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id, event_type, data) values `)
	args := make([]any, 1, 1+6*len(rows))
	args[0] = ws
	for i, r := range rows {
		if i > 0 {
			sql.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&sql, "($1, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6)
		args = append(args, r...)
	}
	sql.WriteString(" on conflict do nothing returning id")
	return sql.String(), args
}

// enqueue queues a delivery job per id in tx and, on b, the statement that
// records each job on its delivery.
func (st Store) enqueue(ctx context.Context, tx pgx.Tx, b *pgx.Batch, shard *tenant.Shard, ws uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	jobIDs, err := st.Jobs.Deliver(ctx, tx, shard, ws, ids)
	if err != nil {
		return err
	}
	if len(jobIDs) != len(ids) {
		return fmt.Errorf("webhook: %d delivery jobs queued for %d deliveries", len(jobIDs), len(ids))
	}
	jobs := make(map[string]int64, len(ids))
	for i, id := range ids {
		jobs[id.String()] = jobIDs[i]
	}
	b.Queue(setJobIDsSQL, ws, ids, jobs)
	return nil
}

// setJobIDsSQL records each delivery's job in one statement that reads no other
// relation (Citus cannot keep an UPDATE ... FROM on one shard once its plan goes
// generic): rows are matched by = any($2) and find their job in the jsonb map
// $3, keyed by delivery id.
const setJobIDsSQL = `update webhook_deliveries d set job_id = ($3::jsonb ->> d.id::text)::bigint
	where d.workspace_id = $1 and d.id = any($2)`
