package quota

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

const columns = "apps, keys_per_app, webhooks, requests_per_month"

func scan(row pgx.Row) (Limits, error) {
	var l Limits
	err := row.Scan(&l.Apps, &l.KeysPerApp, &l.Webhooks, &l.RequestsPerMonth)
	if errors.Is(err, pgx.ErrNoRows) {
		return Limits{}, nil // no row: no limits
	}
	return l, err
}

// Get reads workspace ws's limits.
func Get(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (Limits, error) {
	var l Limits
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+columns+" from workspace_quotas where workspace_id = $1", ws).
			QueryRow(func(row pgx.Row) (err error) { l, err = scan(row); return err })
	})
	return l, err
}

// Set replaces workspace ws's limits and records the change in its audit
// log, in one transaction. The update takes the insert's updated_at (its
// default, now()): Citus refuses a function that is not immutable in the
// DO UPDATE SET of an insert on a distributed table.
func Set(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, l Limits) (Limits, error) {
	if err := l.Validate(); err != nil {
		return Limits{}, err
	}
	var out Limits
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		out, err = scan(tx.QueryRow(ctx, `insert into workspace_quotas (workspace_id, `+columns+`)
			values ($1, $2, $3, $4, $5)
			on conflict (workspace_id) do update set apps = excluded.apps, keys_per_app = excluded.keys_per_app,
				webhooks = excluded.webhooks, requests_per_month = excluded.requests_per_month,
				updated_at = excluded.updated_at
			returning `+columns, ws, l.Apps, l.KeysPerApp, l.Webhooks, l.RequestsPerMonth))
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.QuotasSet, audit.Target{Type: "workspace", ID: ws.String()})
	})
	return out, err
}

// Hold keeps a creation of kind k in workspace ws within its quota. Called in
// the creation's transaction before its insert, it locks the workspace's
// quota row until that transaction ends, so creations of the workspace are
// counted one after another; when the quota is set it asks used for the
// count (the owner of the rows counts its own table, in tx) and refuses the
// creation at the limit. A workspace without quotas takes no lock: it has
// nothing to overshoot.
func Hold(ctx context.Context, tx pgx.Tx, ws uuid.UUID, k Kind, used func() (int64, error)) error {
	l, err := scan(tx.QueryRow(ctx,
		"select "+columns+" from workspace_quotas where workspace_id = $1 for update", ws))
	if err != nil {
		return err
	}
	limit := l.Of(k)
	if limit == nil {
		return nil
	}
	n, err := used()
	if err != nil {
		return err
	}
	if n >= *limit {
		observe(k, n, *limit, true)
		return Exceeded(k, *limit, n)
	}
	observe(k, n+1, *limit, false)
	return nil
}
