package storekit

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// FailedOp is why an atomic batch wrote nothing: the operation at Index failed.
// The API's batch engine reads it through FailedIndex and Unwrap.
type FailedOp struct {
	Index int
	Err   error
}

func (f *FailedOp) Error() string { return fmt.Sprintf("operation %d: %v", f.Index, f.Err) }

// Unwrap is the operation's own error.
func (f *FailedOp) Unwrap() error { return f.Err }

// FailedIndex is the position of the operation that failed.
func (f *FailedOp) FailedIndex() int { return f.Index }

// IDs collects the ids a `... returning id` statement answered, in id order
// (time order), so a cascade's events come out in a stable order.
func IDs(rows pgx.Rows, err error) ([]uuid.UUID, error) {
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids, err
}

// Run is a store's run of one batch operation inside a transaction.
type Run[Op, T any] func(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, op Op) (T, error)

// Do runs one operation in a transaction of its own, as its own endpoint
// would.
func Do[Op, T any](ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op, run Run[Op, T]) (T, error) {
	return Tx(ctx, shard, ws, func(tx pgx.Tx) (T, error) { return run(ctx, tx, shard, ws, op) })
}

// DoAtomic runs ops in order in one transaction: all of them commit, with
// their events, or the first failure (a *FailedOp) rolls every one back.
func DoAtomic[Op, T any](
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	ops []Op,
	run Run[Op, T],
) ([]T, error) {
	return Tx(ctx, shard, ws, func(tx pgx.Tx) ([]T, error) {
		out := make([]T, 0, len(ops))
		for i, op := range ops {
			done, err := run(ctx, tx, shard, ws, op)
			if err != nil {
				// Mapped here, not by Tx, so that the batch reports a
				// refused statement as this operation's failure.
				return nil, &FailedOp{Index: i, Err: tenant.DBError(err)}
			}
			out = append(out, done)
		}
		return out, nil
	})
}
