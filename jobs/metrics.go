package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

var (
	riverJobs = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_river_jobs_total",
		Help: "River job runs, by kind and outcome state (completed, failed, cancelled, snoozed).",
	}, []string{"kind", "state"})
	riverJobDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pmapi_river_job_duration_seconds",
		Help:    "Time spent working one River job, by kind.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"kind"})
)

// jobMetrics is River worker middleware that times every job and counts its
// outcome.
type jobMetrics struct {
	river.MiddlewareDefaults
}

var _ rivertype.WorkerMiddleware = (*jobMetrics)(nil)

// Work wraps one job run.
func (m *jobMetrics) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	err := doInner(ctx)
	riverJobDuration.WithLabelValues(job.Kind).Observe(time.Since(start).Seconds())
	riverJobs.WithLabelValues(job.Kind, outcomeOf(err)).Inc()
	return err
}

func outcomeOf(err error) string {
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		return "completed"
	case errors.As(err, &cancel):
		return "cancelled"
	case errors.As(err, &snooze):
		return "snoozed"
	}
	return "failed"
}
