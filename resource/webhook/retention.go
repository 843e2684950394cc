package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/tenant"
)

// Events, deliveries and attempts are kept for the event retention in daily
// partitions (migration 0025, docs/decisions/event-feed.md): a partition is
// dropped whole once every row it can hold is older than the retention, and
// the days ahead have their partitions before any write needs them.

// DefaultEventRetention is PMAPI_EVENT_RETENTION's default.
const DefaultEventRetention = 720 * time.Hour

// MinEventRetention is the shortest retention: a partition is a day, and a
// shorter retention would drop the day still being written.
const MinEventRetention = 24 * time.Hour

// PartitionsAhead is how far ahead the partitions are made. The retention
// job runs hourly, so a write finds its partition made days before, even
// across a few days of the job not running.
const PartitionsAhead = 7 * 24 * time.Hour

// CheckEventRetention says why a retention cannot be used, or nil.
func CheckEventRetention(d time.Duration) error {
	if d < MinEventRetention {
		return fmt.Errorf("the event retention must be at least %s (one daily partition), not %s", MinEventRetention, d)
	}
	return nil
}

// Kept is what a retention run changed.
type Kept struct {
	Made, Dropped int
}

// KeepPartitions makes the partitions from today to PartitionsAhead and drops
// those wholly older than retention, on the shard's own pool (the Citus
// coordinator, where DDL runs). The owner's functions of migration 0025 do
// the DDL; the server's role may only call them.
func KeepPartitions(ctx context.Context, shard *tenant.Shard, retention time.Duration, now time.Time) (Kept, error) {
	var k Kept
	if err := CheckEventRetention(retention); err != nil {
		return k, err
	}
	err := ddl(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select pmapi_make_partitions($1, $2)", now, now.Add(PartitionsAhead)).
			Scan(&k.Made)
	})
	if err != nil {
		return k, fmt.Errorf("make partitions: %w", err)
	}
	err = ddl(ctx, func() error {
		return shard.Pool.QueryRow(ctx, "select pmapi_drop_partitions($1)", now.Add(-retention)).Scan(&k.Dropped)
	})
	if err != nil {
		return k, fmt.Errorf("drop partitions: %w", err)
	}
	return k, nil
}

// ddl runs a partition change again, a few times, when it lost a deadlock to
// the writes around it or gave up waiting for its lock: both are the retention
// yielding to traffic, and a moment later it usually goes through.
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
