package storekit

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
