package storekit

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// Scan reads one row into a T; a store's scan also turns pgx.ErrNoRows into
// its not-found error.
type Scan[T any] func(pgx.Row) (T, error)

// QueueRow queues sql on a read's batch; its one row, read by scan, lands in
// *into.
func QueueRow[T any](b *pgx.Batch, into *T, scan Scan[T], sql string, args ...any) {
	b.Queue(sql, args...).QueryRow(func(row pgx.Row) (err error) {
		*into, err = scan(row)
		return err
	})
}

// QueueRows queues sql on a read's batch; its rows, each read by scan, land
// in *into.
func QueueRows[T any](b *pgx.Batch, into *[]T, scan Scan[T], sql string, args ...any) {
	b.Queue(sql, args...).Query(func(rows pgx.Rows) (err error) {
		*into, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
		return err
	})
}

// genericPlans keeps a list statement on PostgreSQL's generic plan. Left to
// choose, PostgreSQL compares the generic plan with the custom plans of the
// first five executions, and for a project much larger than the average one
// (or, with LIMIT as a parameter, any project of more than about 500 rows) it
// judges the generic plan dearer and plans every execution anew: about 70 µs
// of its CPU a page at 100,000 tasks (docs/decisions/reads.md, "A list keeps one plan";
// TestListKeepsItsPlan). A keyset page of equality filters has one good plan
// whatever the values, the index that ends in id, and its statement (with
// the limit in its text, Limit) is planned once per connection. The setting
// ends with the read's transaction. Not on Citus (SetLocal mode): there the
// coordinator's router planner builds the shard's query, and a generic plan
// of a statement with a correlated subquery (the analyses' node count) cannot
// be distributed at all ("could not create distributed plan").
var genericPlans = []tenant.LocalSetting{tenant.MustLocalSetting("plan_cache_mode", "force_generic_plan")}

// Querier reads a row on a pool or in a transaction, so one read function
// serves a plain read and a read for update inside a change.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Get reads one row of the workspace in one round trip (shard.Read).
func Get[T any](
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	scan Scan[T],
	sql string,
	args ...any,
) (T, error) {
	var v T
	err := shard.Read(ctx, ws, func(b *pgx.Batch) { QueueRow(b, &v, scan, sql, args...) })
	return v, err
}

// List reads the rows of a query of the workspace in one round trip
// (shard.Read), two in a walk by updatedAt (Where.Page: its horizon first).
func List[T any](
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	scan Scan[T],
	sql string,
	args ...any,
) ([]T, error) {
	var out []T
	if _, err := fillHorizon(ctx, shard, ws, args); err != nil {
		return nil, err
	}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) { QueueRows(b, &out, scan, sql, args...) })
	return out, err
}

// ReadUnder is shard.Read for rows under one parent row: exists, a `select
// exists(...)` of the parent taking the workspace and id as $1 and $2, runs in
// the same round trip, and when it finds nothing the read is noun's
// not-found rather than an empty answer.
func ReadUnder(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	noun, exists string,
	id any,
	queue func(b *pgx.Batch),
) error {
	found := false
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(exists, ws, id).QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		queue(b)
	})
	if err == nil && !found {
		return pmapi.NotFound(noun)
	}
	return err
}

// Tx runs fn in a transaction of the workspace (shard.Tx, which runs it again
// from the start after a deadlock or a serialization failure) and answers
// what its last run answered.
func Tx[T any](ctx context.Context, shard *tenant.Shard, ws uuid.UUID, fn func(tx pgx.Tx) (T, error)) (T, error) {
	var out T
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) (err error) {
		out, err = fn(tx)
		return err
	})
	return out, err
}

// Found turns a read that found no row (pgx.ErrNoRows) into noun's
// not-found: a row of another workspace is one the caller cannot see.
func Found(err error, noun string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return pmapi.NotFound(noun)
	}
	return err
}
