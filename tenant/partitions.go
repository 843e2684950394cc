package tenant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PartitionKeeper names an owner's pair of migration functions over its daily
// partitions (the server's role may call them, never touch a partition
// itself): Make(since, until) makes the missing days and returns how many,
// Drop(before) drops the days wholly before its argument and returns how
// many. The owner writes the functions; the keeper only calls them.
type PartitionKeeper struct {
	Make, Drop string
}

// Keep makes the partitions from now to ahead and drops those wholly older
// than retention, on the shard's own pool (the Citus coordinator, where DDL
// runs).
func (k PartitionKeeper) Keep(
	ctx context.Context,
	shard *Shard,
	retention, ahead time.Duration,
	now time.Time,
) (made, dropped int, err error) {
	err = retryDDL(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select "+k.Make+"($1, $2)", now, now.Add(ahead)).Scan(&made)
	})
	if err != nil {
		return made, 0, fmt.Errorf("%s: %w", k.Make, err)
	}
	err = retryDDL(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select "+k.Drop+"($1)", now.Add(-retention)).Scan(&dropped)
	})
	if err != nil {
		return made, dropped, fmt.Errorf("%s: %w", k.Drop, err)
	}
	return made, dropped, nil
}

// retryDDL runs a partition change again, a few times, when it lost a
// deadlock to the writes around it (40P01) or gave up waiting for its locks
// (55P03, the functions' lock timeout): both are the retention yielding to
// traffic, and a moment later it usually goes through.
func retryDDL(ctx context.Context, run func() error) error {
	var err error
	for try := 1; try <= 5; try++ {
		var pgErr *pgconn.PgError
		if err = run(); !errors.As(err, &pgErr) || (pgErr.Code != "40P01" && pgErr.Code != "55P03") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * 200 * time.Millisecond):
		}
	}
	return err
}
