package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// Delivery metrics: no workspace, app or id label.
var (
	deliveryAttempts = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by outcome (succeeded, failed, dead, blocked).",
	}, []string{"outcome"})
	attemptDuration = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "pmapi_webhook_attempt_duration_seconds",
		Help:    "Time one delivery attempt took, answer or failure.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	deadDeliveries = promauto.NewCounter(prometheus.CounterOpts{
		Name: "pmapi_webhook_dead_deliveries_total",
		Help: "Deliveries that failed every attempt and are DEAD.",
	})
	ssrfBlocked = promauto.NewCounter(prometheus.CounterOpts{
		Name: "pmapi_webhook_ssrf_blocked_total",
		Help: "Delivery attempts refused by the SSRF guard at dial time.",
	})
)

func init() {
	// Export every outcome from the start, so dashboards and alerts see zeros
	// rather than missing series.
	for _, o := range []string{"succeeded", "failed", "dead", "blocked"} {
		deliveryAttempts.WithLabelValues(o)
	}
}

func countDead(n int) {
	if n > 0 {
		deadDeliveries.Add(float64(n))
		deliveryAttempts.WithLabelValues("dead").Add(float64(n))
	}
}

// Schedule is the production retry schedule: after attempt n fails, the next
// follows Schedule[n-1] later; six attempts in all, then DEAD.
var Schedule = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// The time bounds of the jobs that send webhooks, which the rescue of a dead
// worker's jobs is derived from. A run starts no attempt after SendWindow; an
// attempt ends within webhook.Timeout (DESIGN.md section 7's 10 s), so River's
// deadline for the run, DeliveryJobTimeout, is the two together, and the
// recording after it (a transaction of a few statements, tens of milliseconds)
// and River's completion fit in RescueMargin. A worker that died in a run is
// noticed DefaultRescueAfter after the run started. A delivery the window
// left unsent waits for its subscription's retry job, due at once, which
// sends in windows of its own: a transaction of a thousand events to one
// endpoint is delivered in a few runs.
const (
	SendWindow         = 2 * time.Second
	DeliveryJobTimeout = SendWindow + webhook.Timeout
	RescueMargin       = 3 * time.Second
	DefaultRescueAfter = DeliveryJobTimeout + RescueMargin
)

// sendersPerJob bounds the subscriptions one fan-out sends to at once.
const sendersPerJob = 16

// Attempt builds, signs and sends one delivery and counts it.
func Attempt(
	ctx context.Context,
	store webhook.Store,
	sender *webhook.Sender,
	d webhook.Delivery,
	sub webhook.Subscription,
) (webhook.Result, error) {
	now := time.Now()
	secrets, err := store.Secrets(sub, now)
	if err != nil {
		return webhook.Result{}, err
	}
	id := pmapi.FormatID(webhook.DeliveryPrefix, d.ID)
	body, _ := json.Marshal(
		webhook.Body{ID: id, EventID: pmapi.FormatID(webhook.EventPrefix, d.Event()), Type: d.EventType,
			OccurredAt: d.When().UTC(), Data: d.Data, SentAt: now.UTC()},
	)
	res := sender.Send(ctx, sub.URL, d.EventType, id, body, webhook.SignDelivery(id, body, now, secrets...))
	attemptDuration.Observe(res.Latency.Seconds())
	switch {
	case res.OK():
		deliveryAttempts.WithLabelValues("succeeded").Inc()
	case res.Blocked:
		ssrfBlocked.Inc()
		deliveryAttempts.WithLabelValues("blocked").Inc()
	default:
		deliveryAttempts.WithLabelValues("failed").Inc()
	}
	return res, nil
}

// DeliverArgs is the one-delivery job of versions before the retry job.
type DeliverArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	DeliveryID  uuid.UUID `json:"deliveryId"`
}

// Kind is the stable job kind.
func (DeliverArgs) Kind() string { return "webhook.deliver" }

// DeliverWorker works the delivery jobs an earlier version left queued: it
// hands each delivery to its subscription's retry job.
type DeliverWorker struct {
	river.WorkerDefaults[DeliverArgs]
	Shard    *tenant.Shard
	Webhooks webhook.Store
}

// Work adopts the delivery.
func (w *DeliverWorker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	return w.Webhooks.Adopt(ctx, w.Shard, job.Args.WorkspaceID, job.Args.DeliveryID)
}

// DeliveryAttempts and DeadDeliveries expose the counters to tests.
func DeliveryAttempts(outcome string) prometheus.Counter {
	return deliveryAttempts.WithLabelValues(outcome)
}

// DeadDeliveries is the dead-delivery counter.
func DeadDeliveries() prometheus.Counter { return deadDeliveries }
