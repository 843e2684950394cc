package jobs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// TestProductionRetrySchedule asserts the spec's schedule exactly: attempt 1 at
// once, then 1 m, 5 m, 30 m, 2 h, 12 h after each failure; six attempts.
func TestProductionRetrySchedule(t *testing.T) {
	want := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}
	if len(jobs.Schedule) != len(want) {
		t.Fatalf("schedule %v", jobs.Schedule)
	}
	now := time.Now()
	fail := webhook.Result{Status: 500, Err: errors.New("500")}
	for i, d := range want {
		v := webhook.Judge(i+1, fail, jobs.Schedule, now)
		if v.Status != webhook.StatusRetrying || v.NextAt == nil || v.NextAt.Sub(now) != d {
			t.Errorf("after attempt %d: %+v, want the next in %v", i+1, v, d)
		}
	}
	if v := webhook.Judge(len(want)+1, fail, jobs.Schedule, now); v.Status != webhook.StatusDead {
		t.Errorf("after attempt %d: %+v, want DEAD", len(want)+1, v)
	}
}
