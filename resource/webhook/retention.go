package webhook

import (
	"context"
	"fmt"
	"time"

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
	var err error
	k.Made, k.Dropped, err = eventPartitions.Keep(ctx, shard, retention, PartitionsAhead, now)
	return k, err
}

// eventPartitions are migration 0025's functions over the events', the
// deliveries' and the attempts' days.
var eventPartitions = tenant.PartitionKeeper{Make: "pmapi_make_partitions", Drop: "pmapi_drop_partitions"}
