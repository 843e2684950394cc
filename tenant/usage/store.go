package usage

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// upsertSQL adds one row's increments to what is stored: every replica and
// every run of one adds its own, so nothing needs reading first.
const upsertSQL = `insert into usage_daily as u (workspace_id, day, client_id,
		requests_2xx, requests_4xx, requests_5xx, events, deliveries, deliveries_failed)
	values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
	on conflict (workspace_id, day, client_id) do update set
		requests_2xx = u.requests_2xx + excluded.requests_2xx,
		requests_4xx = u.requests_4xx + excluded.requests_4xx,
		requests_5xx = u.requests_5xx + excluded.requests_5xx,
		events = u.events + excluded.events,
		deliveries = u.deliveries + excluded.deliveries,
		deliveries_failed = u.deliveries_failed + excluded.deliveries_failed`

type row struct {
	key
	Counts
}

// Flush writes what the counter holds, one transaction per workspace on the
// node that holds it. A workspace whose write fails keeps its counts for the
// next flush; one that no longer exists or is being erased loses them. The error is
// the first of the failures.
func (c *Counter) Flush(ctx context.Context, dir *tenant.Directory) error {
	c.flushing.Lock()
	defer c.flushing.Unlock()
	taken := c.take()
	byWorkspace := map[string][]row{}
	for k, v := range taken {
		byWorkspace[k.workspace] = append(byWorkspace[k.workspace], row{k, *v})
	}
	var errs []error
	for ws, rows := range byWorkspace {
		err := write(ctx, dir, ws, rows)
		if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
			continue
		}
		if err != nil {
			back := make(map[key]*Counts, len(rows))
			for _, r := range rows {
				back[r.key] = taken[r.key]
			}
			c.putBack(back)
			errs = append(errs, err)
		}
	}
	observeTop(byWorkspace)
	return errors.Join(errs...)
}

// write adds one workspace's rows in one transaction. The rows go in key
// order, so two replicas flushing the same workspace lock its rows in the
// same order and wait for each other rather than deadlock.
func write(ctx context.Context, dir *tenant.Directory, workspace string, rows []row) error {
	id, err := uuid.Parse(workspace)
	if err != nil {
		return pmapi.NotFound("workspace")
	}
	w, err := dir.Get(ctx, id)
	if err != nil {
		return err
	}
	// A workspace being erased gets no new rows: its job may have emptied
	// usage_daily already, and nothing of it may outlive the erasure.
	if e, err := workspacedata.ErasureOf(ctx, dir, id); err != nil || e != nil {
		return cmp.Or(err, error(pmapi.NotFound("workspace")))
	}
	shard, err := dir.ShardOf(w)
	if err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.client, b.client))
	})
	return shard.Tx(ctx, id, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range rows {
			b.Queue(upsertSQL, id, dateOf(r.day), r.client, r.Requests2xx, r.Requests4xx, r.Requests5xx,
				r.Events, r.Deliveries, r.DeliveriesFailed)
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// Day is one stored row of usage.
type Day struct {
	Date     time.Time // midnight UTC
	ClientID string    // empty for the workspace's own (events)
	Counts
}

// Read returns workspace's stored usage from one date to another, both
// included, by date then client id. What replicas have counted and not
// flushed yet is not in it.
func Read(ctx context.Context, shard *tenant.Shard, workspace uuid.UUID, from, to time.Time) ([]Day, error) {
	var out []Day
	err := shard.Read(ctx, workspace, func(b *pgx.Batch) {
		b.Queue(`select day, client_id, requests_2xx, requests_4xx, requests_5xx, events, deliveries,
				deliveries_failed
			from usage_daily where workspace_id = $1 and day between $2 and $3 order by day, client_id`,
			workspace, from, to).Query(func(rows pgx.Rows) error {
			out = out[:0]
			for rows.Next() {
				var d Day
				if err := rows.Scan(&d.Date, &d.ClientID, &d.Requests2xx, &d.Requests4xx, &d.Requests5xx,
					&d.Events, &d.Deliveries, &d.DeliveriesFailed); err != nil {
					return err
				}
				out = append(out, d)
			}
			return rows.Err()
		})
	})
	return out, tenant.DBError(err)
}

// MonthRequests is workspace's requests in the current UTC month: what the
// table holds plus what this process has counted and not flushed. Other
// replicas' unflushed counts are not in it, so it trails the truth by at
// most a flush interval of their traffic. It waits for a flush under way.
func (c *Counter) MonthRequests(ctx context.Context, shard *tenant.Shard, workspace uuid.UUID) (int64, error) {
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	// Held while reading both, so a flush moving counts from memory to the
	// table is seen before or after, never half.
	c.flushing.RLock()
	defer c.flushing.RUnlock()
	var stored int64
	err := shard.Read(ctx, workspace, func(b *pgx.Batch) {
		b.Queue(`select coalesce(sum(requests_2xx + requests_4xx + requests_5xx), 0)::bigint
			from usage_daily where workspace_id = $1 and day >= $2`, workspace, first).
			QueryRow(func(r pgx.Row) error { return r.Scan(&stored) })
	})
	if err != nil {
		return 0, tenant.DBError(err)
	}
	return stored + c.pendingRequests(workspace.String(), dayOf(first)), nil
}
