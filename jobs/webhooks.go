package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

// Schedule is the production retry schedule: after attempt n fails, the next
// follows Schedule[n-1] later; six attempts in all, then DEAD.
var Schedule = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// DeliverArgs asks for one delivery attempt.
type DeliverArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	DeliveryID  uuid.UUID `json:"deliveryId"`
}

// Kind is the stable job kind.
func (DeliverArgs) Kind() string { return "webhook.deliver" }

// Deliver queues one delivery job per id in tx and returns their job ids.
func (cs *Clients) Deliver(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, ids []uuid.UUID) ([]int64, error) {
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: DeliverArgs{WorkspaceID: ws, DeliveryID: id},
			InsertOpts: &river.InsertOpts{MaxAttempts: len(cs.schedule) + 1}}
	}
	res, err := cs.For(shard.Name).InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Job.ID
	}
	return out, nil
}

// Cancel cancels queued delivery jobs in tx: a disabled subscription's retries
// never run.
func (cs *Clients) Cancel(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, jobIDs []int64) error {
	for _, id := range jobIDs {
		if _, err := cs.For(shard.Name).JobCancelTx(ctx, tx, id); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool { return err != nil && err.Error() == river.ErrNotFound.Error() }

// DeliverWorker makes one attempt of a delivery.
type DeliverWorker struct {
	river.WorkerDefaults[DeliverArgs]
	Directory *tenant.Directory
	Store     webhook.Store
	Sender    *webhook.Sender
	Schedule  []time.Duration
}

// NextRetry follows the schedule (River's retry policy per worker).
func (w *DeliverWorker) NextRetry(job *river.Job[DeliverArgs]) time.Time {
	i := job.Attempt - 1
	if i >= len(w.Schedule) {
		i = len(w.Schedule) - 1
	}
	return time.Now().Add(w.Schedule[i])
}

// Timeout leaves room for the 10 s HTTP timeout and the bookkeeping around it.
func (w *DeliverWorker) Timeout(*river.Job[DeliverArgs]) time.Duration { return 30 * time.Second }

// Work sends the delivery and records the attempt. A failure before the last
// attempt returns an error, so River schedules the next one; the last failure
// marks the delivery DEAD and ends the job.
func (w *DeliverWorker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	shard, err := workspaceShard(ctx, w.Directory, job.Args.WorkspaceID)
	if err != nil {
		return err
	}
	ws := job.Args.WorkspaceID
	d, sub, err := w.Store.ForAttempt(ctx, shard, ws, job.Args.DeliveryID)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if d.Status != "PENDING" && d.Status != "RETRYING" {
		return nil // cancelled, or already done by an earlier run of this job
	}
	if sub.Status != "ACTIVE" {
		return river.JobCancel(errSubscriptionDisabled)
	}
	res, err := Attempt(ctx, w.Store, w.Sender, d, sub)
	if err != nil {
		return err
	}
	final := job.Attempt >= len(w.Schedule)+1
	o := webhook.Outcome{Attempt: job.Attempt, Result: res, Status: "SUCCEEDED"}
	switch {
	case res.OK():
	case res.Status == 410:
		o.Status, o.DisableOn = "DEAD", "the endpoint answered 410 Gone"
	case final:
		o.Status = "DEAD"
	default:
		next := w.NextRetry(job)
		o.Status, o.NextAt = "RETRYING", &next
	}
	if _, err := w.Store.Record(ctx, shard, ws, d, o); err != nil {
		return err
	}
	if o.Status == "DEAD" {
		deadDeliveries.Inc()
		deliveryAttempts.WithLabelValues("dead").Inc()
	}
	if o.Status == "RETRYING" {
		return res.Err
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

const errSubscriptionDisabled = errorString("the subscription is disabled")

// Attempt builds, signs and sends one delivery and counts it.
func Attempt(ctx context.Context, store webhook.Store, sender *webhook.Sender, d webhook.Delivery, sub webhook.Subscription) (webhook.Result, error) {
	now := time.Now()
	secrets, err := store.Secrets(sub, now)
	if err != nil {
		return webhook.Result{}, err
	}
	id := pmapi.FormatID(webhook.DeliveryPrefix, d.ID)
	body, _ := json.Marshal(webhook.Body{ID: id, Type: d.EventType, Data: d.Data, SentAt: now.UTC()})
	res := sender.Send(ctx, sub.URL, d.EventType, id, body, webhook.Sign(body, now, secrets...))
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

// DeliveryAttempts and DeadDeliveries expose the counters to tests.
func DeliveryAttempts(outcome string) prometheus.Counter {
	return deliveryAttempts.WithLabelValues(outcome)
}

// DeadDeliveries is the dead-delivery counter.
func DeadDeliveries() prometheus.Counter { return deadDeliveries }
