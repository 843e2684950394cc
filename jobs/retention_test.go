package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// TestRetentionJobRunsOnStart: a working process runs the event.retention
// job as it starts, as the server's role, and it drops a day past the
// retention while the coming week stays; a retention under a day is refused
// before any client is made.
func TestRetentionJobRunsOnStart(t *testing.T) {
	ctx := context.Background()
	dir, _ := testdb.Directory(t)
	if _, err := jobs.NewClients(dir, jobs.Options{EventRetention: time.Hour}); err == nil ||
		!strings.Contains(err.Error(), "at least 24h") {
		t.Fatalf("a 1h retention: %v, want it refused", err)
	}

	owner := testdb.OwnerPool(t)
	old := time.Now().Add(-40 * 24 * time.Hour)
	if _, err := testdb.Conn(t, testdb.Database(t).AdminURL).Exec(ctx, "select pmapi_make_partitions($1, $2)",
		old, old.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	oldest := func() time.Time {
		var end time.Time
		if err := owner.QueryRow(ctx, `select min(pmapi_partition_end(inhrelid::regclass)) from pg_inherits
			where inhparent = 'event_log'::regclass`).Scan(&end); err != nil {
			t.Fatal(err)
		}
		return end
	}
	if !oldest().Before(time.Now().Add(-webhook.DefaultEventRetention)) {
		t.Fatal("no partition past the retention to drop")
	}

	clients, err := jobs.NewClients(dir, jobs.Options{Work: true})
	if err != nil {
		t.Fatal(err)
	}
	client := clients.For("default")
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := clients.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer clients.Stop(ctx)
	waitForJob(t, events, jobs.RetentionArgs{}.Kind())
	if end := oldest(); end.Before(time.Now().Add(-webhook.DefaultEventRetention)) {
		t.Errorf("the oldest event_log partition ends %v, past the retention", end)
	}
	var ahead time.Time
	if err := owner.QueryRow(ctx, `select max(pmapi_partition_end(inhrelid::regclass)) from pg_inherits
		where inhparent = 'webhook_deliveries'::regclass`).Scan(&ahead); err != nil {
		t.Fatal(err)
	}
	if ahead.Before(time.Now().Add(6 * 24 * time.Hour)) {
		t.Errorf("deliveries have partitions up to %v only, want a week ahead", ahead)
	}
}
