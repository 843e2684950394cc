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
// retention of the events and of the audit log while the coming week stays; a retention under a day is refused
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
	if _, err := testdb.Conn(t, testdb.Database(t).AdminURL).Exec(ctx, "select pmapi_make_audit_partitions($1, $2)",
		old, old.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	end := func(agg, table string) time.Time {
		var end time.Time
		if err := owner.QueryRow(ctx, `select `+agg+`(pmapi_partition_end(inhrelid::regclass)) from pg_inherits
			where inhparent = $1::regclass`, table).Scan(&end); err != nil {
			t.Fatal(err)
		}
		return end
	}
	for _, table := range []string{"event_log", "audit_log"} {
		if !end("min", table).Before(time.Now().Add(-webhook.DefaultEventRetention)) {
			t.Fatalf("no %s partition past the retention to drop", table)
		}
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
	for _, table := range []string{"event_log", "audit_log"} {
		if oldest := end("min", table); oldest.Before(time.Now().Add(-webhook.DefaultEventRetention)) {
			t.Errorf("the oldest %s partition ends %v, past the retention", table, oldest)
		}
	}
	for _, table := range []string{"webhook_deliveries", "audit_log"} {
		if ahead := end("max", table); ahead.Before(time.Now().Add(6 * 24 * time.Hour)) {
			t.Errorf("%s has partitions up to %v only, want a week ahead", table, ahead)
		}
	}
}
