package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

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
