package jobs_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/pmapi/pmapi/jobs"
)

// TestProductionRetrySchedule asserts the spec's schedule exactly: attempt 1 at
// once, then 1 m, 5 m, 30 m, 2 h, 12 h after each failure; six attempts.
func TestProductionRetrySchedule(t *testing.T) {
	want := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}
	if len(jobs.Schedule) != len(want) {
		t.Fatalf("schedule %v", jobs.Schedule)
	}
	w := &jobs.DeliverWorker{Schedule: jobs.Schedule}
	for i, d := range want {
		if jobs.Schedule[i] != d {
			t.Errorf("retry %d after %v, want %v", i+1, jobs.Schedule[i], d)
		}
		job := &river.Job[jobs.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: i + 1}}
		next := time.Until(w.NextRetry(job))
		if next < d-time.Second || next > d+time.Second {
			t.Errorf("after attempt %d the next is in %v, want %v", i+1, next, d)
		}
	}
}
