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
func Attempt(ctx context.Context, store webhook.Store, sender *webhook.Sender, d webhook.Delivery, sub webhook.Subscription) (webhook.Result, error) {
	now := time.Now()
	secrets, err := store.Secrets(sub, now)
	if err != nil {
		return webhook.Result{}, err
	}
	id := pmapi.FormatID(webhook.DeliveryPrefix, d.ID)
	body, _ := json.Marshal(webhook.Body{ID: id, EventID: pmapi.FormatID(webhook.EventPrefix, d.Event()), Type: d.EventType,
		OccurredAt: d.When().UTC(), Data: d.Data, SentAt: now.UTC()})
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

// FanoutWorker delivers a transaction's events (docs/decisions.md, Webhooks):
// it reads them with the workspace's subscriptions, sends each delivery it may
// right away (in parallel across subscriptions, in event order within one),
// and then writes every delivery with its outcome, the attempts and the
// events' mark in one transaction. What it may not send (an open circuit, a
// rate cap, a failure before it in the same subscription, the send window
// closing) and what failed wait for the subscription's retry job. A worker that
// dies between sending and recording leaves the events unmarked, and the
// rescued job sends them again: delivery is at least once, and receivers drop
// the repeat by eventId.
type FanoutWorker struct {
	river.WorkerDefaults[FanoutArgs]
	Shard    *tenant.Shard
	Webhooks webhook.Store
	Sender   *webhook.Sender
	Schedule []time.Duration
}

// Timeout bounds a run (DeliveryJobTimeout), which the rescue time is made from.
func (w *FanoutWorker) Timeout(*river.Job[FanoutArgs]) time.Duration { return DeliveryJobTimeout }

// Work fans the job's events out.
func (w *FanoutWorker) Work(ctx context.Context, job *river.Job[FanoutArgs]) error {
	ws := job.Args.WorkspaceID
	ids := job.Args.EventIDs
	if job.Args.EventID != uuid.Nil {
		ids = append(ids, job.Args.EventID)
	}
	events, subs, err := w.Webhooks.LoadFanout(ctx, w.Shard, ws, ids)
	if err != nil || len(events) == 0 {
		return err
	}
	start := time.Now()
	plans := webhook.Plans(events, subs, start)
	runs := make([]webhook.Fanned, len(plans))
	sem := make(chan struct{}, sendersPerJob)
	done := make(chan struct{}, len(plans))
	for i, p := range plans {
		runs[i] = webhook.Fanned{Plan: p, Sent: make([]*webhook.Sent, len(p.Deliveries))}
		if !p.Sub.Inline() {
			done <- struct{}{}
			continue
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem; done <- struct{}{} }()
			for k, d := range p.Deliveries {
				if time.Since(start) > SendWindow {
					return
				}
				at := time.Now()
				res, err := Attempt(ctx, w.Webhooks, w.Sender, d, p.Sub)
				if err != nil {
					res = webhook.Result{Err: err}
				}
				runs[i].Sent[k] = &webhook.Sent{At: at, Result: res}
				if !res.OK() {
					return
				}
			}
		}()
	}
	for range plans {
		<-done
	}
	marked := make([]uuid.UUID, len(events))
	for i, e := range events {
		marked[i] = e.ID
	}
	// The sends are made: a job cancelled now would send them again.
	rep, err := w.Webhooks.RecordFanout(context.WithoutCancel(ctx), w.Shard, ws, marked, runs, w.Schedule)
	if err == nil {
		countDead(rep.Dead)
	}
	return err
}

// RetryArgs asks for a subscription's due waiting deliveries to be sent.
// Probe says the circuit was open when it was queued (the open-circuit gauge
// counts such jobs).
type RetryArgs struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	Probe          bool      `json:"probe,omitempty"`
}

// Kind is the stable job kind.
func (RetryArgs) Kind() string { return "webhook.retry" }

// retryBatch caps the deliveries one retry run takes.
const retryBatch = 100

// RetryWorker sends a subscription's due waiting deliveries, oldest first,
// over one keep-alive connection: retries, deliveries that waited for the
// circuit or the rate cap, and replays. An open circuit sends only its probe;
// if it succeeds the circuit closes and the rest follow in the same run.
type RetryWorker struct {
	river.WorkerDefaults[RetryArgs]
	Shard    *tenant.Shard
	Webhooks webhook.Store
	Sender   *webhook.Sender
	Schedule []time.Duration
}

// Timeout bounds a run, as the fan-out's.
func (w *RetryWorker) Timeout(*river.Job[RetryArgs]) time.Duration { return DeliveryJobTimeout }

// Work sends and records one run.
func (w *RetryWorker) Work(ctx context.Context, job *river.Job[RetryArgs]) error {
	ws, subID := job.Args.WorkspaceID, job.Args.SubscriptionID
	sub, due, err := w.Webhooks.LoadRetry(ctx, w.Shard, ws, subID, retryBatch)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if sub.RetryJobID == nil || *sub.RetryJobID != job.ID || sub.Status != "ACTIVE" {
		return nil // replaced by another job, or the subscription was disabled
	}
	start := time.Now()
	var pace time.Duration
	if sub.MaxPerSecond != nil {
		pace = time.Second / time.Duration(*sub.MaxPerSecond)
	}
	h, probing := sub.Health, false
	if !h.Closed() {
		if !h.ProbeDue(start) || len(due) == 0 {
			due = nil // nothing to probe yet: the run only queues the next
		} else {
			ok, err := w.Webhooks.StartProbe(ctx, w.Shard, ws, subID, job.ID)
			if err != nil || !ok {
				return err
			}
			h.Circuit, probing = webhook.CircuitHalfOpen, true
		}
	}
	breaker := w.Webhooks.CircuitBreaker()
	var sent []webhook.RetrySent
	more := false
	for i, d := range due {
		if !h.Closed() && !(probing && i == 0) {
			break // the circuit opened, or the probe failed: the rest wait
		}
		if i > 0 && time.Since(start)+pace > SendWindow {
			more = true
			break
		}
		if pace > 0 {
			// Before the first send too: the run before may have sent a
			// moment ago.
			select {
			case <-ctx.Done():
			case <-time.After(pace):
			}
		}
		at := time.Now()
		res, err := Attempt(ctx, w.Webhooks, w.Sender, d, sub)
		if err != nil {
			res = webhook.Result{Err: err}
		}
		sent = append(sent, webhook.RetrySent{Delivery: d, Sent: webhook.Sent{At: at, Result: res}})
		h = breaker.After(h, res.OK(), at)
	}
	if len(due) == retryBatch && len(sent) == len(due) && h.Closed() {
		more = true
	}
	dead, err := w.Webhooks.RecordRetry(context.WithoutCancel(ctx), w.Shard, ws, subID, job.ID, sent, more, w.Schedule)
	if err == nil {
		countDead(dead)
	}
	return err
}

// Retry queues a subscription's retry job at at in tx (webhook.Jobs).
func (cs *Clients) Retry(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, sub uuid.UUID, at time.Time, probe bool) (int64, error) {
	res, err := cs.For(shard.Name).InsertTx(ctx, tx, RetryArgs{WorkspaceID: ws, SubscriptionID: sub, Probe: probe},
		&river.InsertOpts{ScheduledAt: at})
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// Cancel cancels queued jobs in tx: a disabled subscription's retries never
// run, and a replaced retry job leaves the open-circuit gauge.
func (cs *Clients) Cancel(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, jobIDs []int64) error {
	for _, id := range jobIDs {
		if _, err := cs.For(shard.Name).JobCancelTx(ctx, tx, id); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool { return err != nil && err.Error() == river.ErrNotFound.Error() }

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
