package webhook

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/tenant"
)

// matches reports whether a subscription wants an event type.
func matches(events []string, typ string) bool {
	for _, e := range events {
		if e == "*" || e == typ {
			return true
		}
	}
	return false
}

// Plan is one subscription's share of a fan-out: a new delivery for each event
// it wants, in event order.
type Plan struct {
	Sub        Subscription
	Deliveries []Delivery
}

// Plans matches events with subscriptions, by type and by project filter. The
// deliveries are not stored yet: the fan-out sends what it may first and
// writes each with its outcome.
func Plans(events []Event, subs []Subscription, now time.Time) []Plan {
	var out []Plan
	projects := eventProjects(events, subs)
	for _, s := range subs {
		p := Plan{Sub: s}
		for i, e := range events {
			if !matches(s.Events, e.Type) || projects != nil && !s.covers(projects[i]) {
				continue
			}
			id, when := e.ID, e.OccurredAt
			p.Deliveries = append(
				p.Deliveries,
				Delivery{ID: DeliveryID(e.ID, s.ID), SubscriptionID: s.ID, ClientID: s.ClientID, EventID: &id,
					OccurredAt: &when, EventType: e.Type, Data: e.Data, Status: StatusPending, CreatedAt: now},
			)
		}
		if len(p.Deliveries) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// DeliveryID is the id of the delivery of event to sub: the same every time
// it is made, so a fan-out sent again after its worker died (and before it
// recorded anything) sends the same X-Service-Delivery-Id, as a retry does.
// It keeps the event id's first 64 bits, a UUIDv7's millisecond and
// sub-millisecond counter, so deliveries sort as their events do (the retry
// job sends in id order), and fills the rest from SHA-256 of the two ids.
func DeliveryID(event, sub uuid.UUID) uuid.UUID {
	h := sha256.New()
	h.Write(event[:])
	h.Write(sub[:])
	var id uuid.UUID
	copy(id[8:], h.Sum(nil))
	copy(id[:8], event[:8])
	id[8] = 0x80 | id[8]&0x3f // RFC 9562 variant
	return id
}

// Sent is one attempt the fan-out made: when it started and what came back.
type Sent struct {
	At     time.Time
	Result Result
}

// Fanned is what a fan-out run did with one plan: for each delivery, its
// attempt, or nil when it was not sent (the circuit is open, the subscription
// has a rate cap, an earlier delivery of the plan failed, or the run's time to
// send was up): such a delivery waits for the subscription's retry job.
type Fanned struct {
	Plan Plan
	Sent []*Sent
}

// FanoutReport is what a recorded fan-out did, for the metrics.
type FanoutReport struct {
	Deliveries, Dead int
}

// RecordFanout writes a fan-out run in one transaction: every delivery with
// its state and, in its attempt log, the attempt made; the events' removal
// from the outbox (a delete leaves their index entries alone, where marking
// them rewrote every row with its payload and indexed it again); and what the
// outcomes did to each subscription's circuit and retry job. When every
// attempt succeeded and nothing waits (the common case) that is one round
// trip; otherwise the subscriptions concerned are locked and read first, since
// their circuit and retry job depend on what they hold now.
func (st Store) RecordFanout(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	events []uuid.UUID,
	runs []Fanned,
	schedule []time.Duration,
) (FanoutReport, error) {
	now := time.Now()
	var rep FanoutReport
	var rows []newDelivery
	type change struct {
		oks     []bool
		waiting *time.Time // the earliest next attempt among its waiting deliveries
		disable string
	}
	changes := map[uuid.UUID]*change{}
	var resets []uuid.UUID // healthy again: only a success was seen
	for _, run := range runs {
		ch := &change{}
		var held *time.Time // after a failure, the plan's later deliveries wait with it
		for i, d := range run.Plan.Deliveries {
			s := run.Sent[i]
			if s == nil {
				at := now
				if held != nil {
					at = *held
				}
				d.Status, d.NextAttemptAt = StatusPending, &at
				ch.waiting = earliest(ch.waiting, &at)
				rows = append(rows, newDelivery{Delivery: d})
				continue
			}
			v := Judge(1, s.Result, schedule, s.At)
			a := Attempt{Delivery: d.ID, Number: 1, At: s.At, Result: s.Result, Verdict: v}
			d.Status, d.Attempts, d.NextAttemptAt, d.CompletedAt = v.Status, 1, v.NextAt, a.completedAt()
			if s.Result.Status != 0 {
				d.LastStatus = &s.Result.Status
			}
			if v.NextAt != nil {
				held = v.NextAt
				ch.waiting = earliest(ch.waiting, v.NextAt)
			}
			if v.Status == StatusDead {
				rep.Dead++
			}
			if v.Disable != "" {
				ch.disable = v.Disable
			}
			ch.oks = append(ch.oks, s.Result.OK())
			rows = append(rows, newDelivery{Delivery: d, first: &a})
		}
		failed := false
		for _, ok := range ch.oks {
			failed = failed || !ok
		}
		switch {
		case failed || ch.waiting != nil || ch.disable != "":
			changes[run.Plan.Sub.ID] = ch
		case len(ch.oks) > 0 && !run.Plan.Sub.Health.Healthy():
			resets = append(resets, run.Plan.Sub.ID)
		}
	}
	rep.Deliveries = len(rows)

	queue := func(b *pgx.Batch) {
		queueNewDeliveries(b, ws, rows)
		for _, id := range resets {
			// A streak ends; a circuit that opened meanwhile waits for its probe.
			b.Queue(`update webhook_subscriptions set consecutive_failures = 0, failing_since = null
				where workspace_id = $1 and id = $2 and circuit = 'CLOSED'`, ws, id)
		}
		for _, id := range outboxOrder(events) {
			b.Queue(deleteEventSQL, ws, id)
		}
	}
	if len(changes) == 0 {
		return rep, batchWithRetries(ctx, func() error { return shard.BatchWith(ctx, ws, recordSettings, queue) })
	}
	ids := make([]uuid.UUID, 0, len(changes))
	for id := range changes {
		ids = append(ids, id)
	}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		rs, err := tx.Query(
			ctx,
			"select "+subColumns+" from webhook_subscriptions s "+
				"where s.workspace_id = $1 and s.id = any($2) order by s.id for update",
			ws,
			ids,
		)
		if err != nil {
			return err
		}
		locked, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (Subscription, error) { return scanSub(r) })
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, set := range recordSettings {
			shard.QueueLocalSetting(b, set)
		}
		queue(b)
		type next struct {
			sub      Subscription
			disable  string
			at       *time.Time
			reopened bool
		}
		var todo []next
		for _, sub := range locked {
			ch := changes[sub.ID]
			h := sub.Health
			for _, ok := range ch.oks {
				h = st.CircuitBreaker().After(h, ok, now)
			}
			if h != sub.Health {
				queueHealth(b, ws, sub.ID, h)
				if h.Circuit != sub.Health.Circuit {
					circuitMoved(h.Circuit)
				}
			}
			n := next{
				sub:      sub,
				disable:  ch.disable,
				at:       ch.waiting,
				reopened: h.Circuit == CircuitOpen && sub.Health.Circuit != CircuitOpen,
			}
			n.sub.Health = h
			if n.disable == "" && len(ch.oks) > 0 && !ch.oks[len(ch.oks)-1] && FailedTooLong(h.FailingSince, now) {
				n.disable = "every delivery failed for 5 days"
			}
			if !h.Closed() && h.ProbeAt != nil && (n.at == nil || n.at.Before(*h.ProbeAt)) {
				n.at = h.ProbeAt
			}
			todo = append(todo, n)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		for _, n := range todo {
			switch {
			case n.sub.Status != "ACTIVE":
				// Disabled since the run read it: what waits is cancelled.
				if _, err := tx.Exec(ctx, `update webhook_deliveries
					set status = 'CANCELLED', completed_at = now(), next_attempt_at = null
					where workspace_id = $1 and subscription_id = $2 and status in ('PENDING', 'RETRYING')`,
					ws, n.sub.ID); err != nil {
					return err
				}
			case n.disable != "":
				if _, err := st.setStatusTx(ctx, tx, shard, ws, n.sub, "DISABLED", n.disable, 0); err != nil {
					return err
				}
			case n.at != nil:
				if err := st.scheduleRetry(ctx, tx, shard, ws, n.sub, *n.at, n.reopened); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return rep, err
}

func earliest(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.Before(*a)) {
		return b
	}
	return a
}

// recordSettings hold in the transaction that records a fan-out: the
// outbox's key lookups, and a commit that does not wait for its WAL to reach
// the disk. What it records was sent already and its job is still running, so
// a server crash that loses the commit (at most three times wal_writer_delay
// of commits) loses nothing that is not done again: the events are still in
// the outbox, and the job, which River completes in a later, durable commit,
// runs again or the sweeper queues them anew; their receivers may see those
// deliveries twice, which at-least-once delivery allows
// (docs/decisions/webhook-outbox.md). The wait is a
// disk flush a delivery, about a tenth of PostgreSQL's CPU for one
// (docs/performance.md).
var recordSettings = []tenant.LocalSetting{KeyLookups, tenant.MustLocalSetting("synchronous_commit", "off")}

// batchWithRetries runs a one-round-trip write up to three times: what it
// records was already sent, and a River retry of the whole job would send it
// again. A unique violation is final: another run recorded the same
// deliveries first.
func batchWithRetries(ctx context.Context, write func() error) error {
	var err error
	for attempt := range 3 {
		var pgErr *pgconn.PgError
		if err = write(); err == nil || ctx.Err() != nil || errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return err
}
