package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

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
	Deliverer
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
		countRetry(ws, sent)
	}
	return err
}

// Retry queues a subscription's retry job at at in tx (webhook.Jobs).
func (cs *Clients) Retry(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws, sub uuid.UUID,
	at time.Time,
	probe bool,
) (int64, error) {
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
