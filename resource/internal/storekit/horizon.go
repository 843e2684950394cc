package storekit

import (
	"context"
	"database/sql/driver"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// Horizon is the bound below which a page of a walk by updatedAt may show
// rows: no transaction still under way on the workspace's node can write an
// updated_at below it, so a later page never finds a row below a cursor that
// passed it (docs/decisions/reads.md, "Incremental sync"). A row's updated_at
// is now(), its transaction's start, which pg_stat_activity shows as
// xact_start from the transaction's first statement to after its commit is
// visible; the server and River's workers write as the same role, whose
// sessions that role sees in full. The slack covers the instant between a
// backend reading the clock for its transaction and publishing it.
type Horizon struct{ at time.Time }

// Value is the bound as the page's parameter.
func (h *Horizon) Value() (driver.Value, error) { return h.at, nil }

// horizonSlack is how far below the read's own statement time the bound
// stays even with no transaction under way.
const horizonSlack = "1 second"

// horizonSQL is the oldest start of a transaction under way in this
// database on the node, other than the read's own, or the read's statement
// time less the slack, whichever is older.
const horizonSQL = `select least(statement_timestamp() - interval '` + horizonSlack + `',
	(select min(xact_start) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'))`

// fillHorizon reads the horizon of a page whose arguments hold one, in a
// read of its own that ends before the page's starts: the page's snapshot
// is taken after every transaction older than the horizon had ended, so it
// sees all of them that committed. A page without one reads nothing here.
func fillHorizon(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, args []any) (bool, error) {
	var h *Horizon
	for _, a := range args {
		if x, ok := a.(*Horizon); ok {
			h = x
		}
	}
	if h == nil {
		return false, nil
	}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(horizonSQL).QueryRow(func(r pgx.Row) error { return r.Scan(&h.at) })
	})
	return true, err
}
