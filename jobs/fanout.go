package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// FanoutWorker delivers a transaction's events (docs/decisions/webhooks.md):
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
	Deliverer
}

// Deliverer is what the two delivering workers (fan-out and retry) send and
// record with: a shard's webhook store, the sender, the retry schedule.
type Deliverer struct {
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
	var inline []int
	for i, p := range plans {
		runs[i] = webhook.Fanned{Plan: p, Sent: make([]*webhook.Sent, len(p.Deliveries))}
		if p.Sub.Inline() {
			inline = append(inline, i)
		}
	}
	send := func(run *webhook.Fanned) {
		for k, d := range run.Plan.Deliveries {
			if time.Since(start) > SendWindow {
				return
			}
			at := time.Now()
			res, err := Attempt(ctx, w.Webhooks, w.Sender, d, run.Plan.Sub)
			if err != nil {
				res = webhook.Result{Err: err}
			}
			run.Sent[k] = &webhook.Sent{At: at, Result: res}
			if !res.OK() {
				return
			}
		}
	}
	if len(inline) == 1 {
		// The usual case, one subscription: a goroutine would only grow a
		// fresh stack for it.
		send(&runs[inline[0]])
	} else {
		sem := make(chan struct{}, sendersPerJob)
		var wg sync.WaitGroup
		for _, i := range inline {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				send(&runs[i])
			})
		}
		wg.Wait()
	}
	marked := make([]uuid.UUID, len(events))
	for i, e := range events {
		marked[i] = e.ID
	}
	// The sends are made: a job cancelled now would send them again.
	rep, err := w.Webhooks.RecordFanout(context.WithoutCancel(ctx), w.Shard, ws, marked, runs, w.Schedule)
	if err == nil {
		countDead(rep.Dead)
		countFanout(ws, len(events), runs)
	}
	return err
}
