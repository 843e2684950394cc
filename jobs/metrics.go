package jobs

import (
	"context"
	"errors"
	"log/slog"
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

func init() {
	// Export every kind and state from the start: dashboards see zeros, not gaps.
	for _, kind := range []string{
		"maintenance.sweep", "event.fanout", "webhook.deliver", "rrca.similarity", "rrca.suggest", "event.retention",
	} {
		for _, state := range []string{"completed", "failed", "cancelled", "snoozed"} {
			riverJobs.WithLabelValues(kind, state)
		}
		riverJobDuration.WithLabelValues(kind)
	}
}

// jobMetrics is River worker middleware that times every job, counts its
// outcome and logs one line for it (id, kind, attempt, outcome; never args,
// which may carry customer data).
type jobMetrics struct {
	river.MiddlewareDefaults
	log *slog.Logger
}

var _ rivertype.WorkerMiddleware = (*jobMetrics)(nil)

// Work wraps one job run.
func (m *jobMetrics) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	err := doInner(ctx)
	elapsed := time.Since(start)
	outcome := outcomeOf(err)
	riverJobDuration.WithLabelValues(job.Kind).Observe(elapsed.Seconds())
	riverJobs.WithLabelValues(job.Kind, outcome).Inc()
	if m.log != nil {
		attrs := []any{"jobId", job.ID, "kind", job.Kind, "attempt", job.Attempt, "outcome", outcome,
			"latencyMs", float64(elapsed.Microseconds()) / 1000}
		if err != nil && outcome == "failed" {
			m.log.Warn("job", append(attrs, "error", err.Error())...)
		} else {
			m.log.Info("job", attrs...)
		}
	}
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
