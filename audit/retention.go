package audit

import (
	"context"
	"fmt"
	"time"

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
	var err error
	k.Made, k.Dropped, err = logPartitions.Keep(ctx, shard, retention, PartitionsAhead, now)
	return k, err
}

// logPartitions are migration 0028's functions over the log's days.
var logPartitions = tenant.PartitionKeeper{Make: "pmapi_make_audit_partitions", Drop: "pmapi_drop_audit_partitions"}
