package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/tenant"
)

// The log is kept for the event retention (PMAPI_EVENT_RETENTION) in daily
// partitions of the entries' time (migration 0028): a partition is dropped
// whole once every entry it can hold is older than the retention, never entry
// by entry, and the days ahead have theirs before any change needs them.

// PartitionsAhead is how far ahead the partitions are made: as far as the
// events' (webhook.PartitionsAhead), so a few days of the hourly job not
// running never leave a change without a partition for its entry.
const PartitionsAhead = 7 * 24 * time.Hour

// MinRetention is the shortest retention, as for the events: a partition is
// a day, and a shorter retention would drop the day still being written.
const MinRetention = 24 * time.Hour

// Kept is what a retention run changed.
type Kept struct {
	Made, Dropped int
}

// KeepPartitions makes the log's partitions from now to PartitionsAhead and
// drops those wholly older than retention, on the shard's own pool (the Citus
// coordinator, where DDL runs), through the owner's functions of migration
// 0028: the server's role may not touch a partition otherwise.
func KeepPartitions(ctx context.Context, shard *tenant.Shard, retention time.Duration, now time.Time) (Kept, error) {
	var k Kept
	if retention < MinRetention {
		return k, fmt.Errorf("the audit log's retention must be at least %s (one daily partition), not %s",
			MinRetention, retention)
	}
	err := ddl(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select pmapi_make_audit_partitions($1, $2)", now, now.Add(PartitionsAhead)).
			Scan(&k.Made)
	})
	if err != nil {
		return k, fmt.Errorf("make audit partitions: %w", err)
	}
	err = ddl(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select pmapi_drop_audit_partitions($1)", now.Add(-retention)).Scan(&k.Dropped)
	})
	if err != nil {
		return k, fmt.Errorf("drop audit partitions: %w", err)
	}
	return k, nil
}

// ddl runs a partition change again, a few times, when it gave up waiting for
// its locks (the functions' lock timeout) or lost a deadlock to the writes
// around it: the retention yields to traffic, and a moment later it usually
// goes through.
func ddl(ctx context.Context, run func() error) error {
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
