package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/tenant"
)

// waitForJob reads events until a job of kind completes; its failure or 20s
// without it fails the test.
func waitForJob(t *testing.T, events <-chan *river.Event, kind string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind != kind {
				continue
			}
			if ev.Kind == river.EventKindJobFailed {
				t.Fatalf("%s job failed: %v", kind, ev.Job.Errors)
			}
			return
		case <-deadline:
			t.Fatalf("%s job did not complete in 20s", kind)
		}
	}
}

// column reads the one column query selects for workspace ws ($1), through
// the shard as the server reads.
func column[T any](t *testing.T, shard *tenant.Shard, ws uuid.UUID, query string) []T {
	t.Helper()
	var out []T
	err := shard.Read(context.Background(), ws, func(b *pgx.Batch) {
		b.Queue(query, ws).Query(func(rows pgx.Rows) error {
			var err error
			out, err = pgx.CollectRows(rows, pgx.RowTo[T])
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
