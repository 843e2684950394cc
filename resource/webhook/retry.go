package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

// A subscription's waiting deliveries (PENDING or RETRYING, due at
// next_attempt_at) are sent by its retry job: one River job per subscription
// at a time, named by the subscription row (retry_job_id, retry_at). Every
// writer that adds a waiting delivery or moves the job holds the row's lock,
// and so does the job when it finishes and queues its successor, so no
// waiting delivery is left without a job to send it (scheduleRetry). Being
// one job, it is also where the rate cap and the half-open probe live.

// LoadRetry reads a subscription and, oldest first, at most limit of its
// waiting deliveries that are due now: one round trip.
func (st Store) LoadRetry(
	ctx context.Context,
	shard *tenant.Shard,
	ws, sub uuid.UUID,
	limit int,
) (Subscription, []Delivery, error) {
	var s Subscription
	var due []Delivery
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		storekit.QueueRow(
			b,
			&s,
			scanSub,
			"select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.id = $2",
			ws,
			sub,
		)
		storekit.QueueRows(
			b,
			&due,
			scanDeliveryRow,
			`select `+deliveryColumns+` from webhook_deliveries d where d.workspace_id = $1 and d.subscription_id = $2
			and d.status in ('PENDING', 'RETRYING') and d.next_attempt_at <= now() order by d.id limit $3`,
			ws,
			sub,
			limit,
		)
	})
	return s, due, err
}

// StartProbe moves the subscription's open circuit to HALF_OPEN for the probe
// that job is about to send. It reports false, and changes nothing, when job is
// no longer the subscription's retry job or the circuit is not open.
func (st Store) StartProbe(ctx context.Context, shard *tenant.Shard, ws, sub uuid.UUID, job int64) (bool, error) {
	started := false
	err := shard.Batch(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`update webhook_subscriptions set circuit = 'HALF_OPEN'
			where workspace_id = $1 and id = $2 and retry_job_id = $3
			and circuit in ('OPEN', 'HALF_OPEN') returning true`, ws, sub, job).
			QueryRow(func(r pgx.Row) error {
				err := r.Scan(&started)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				return err
			})
	})
	if started {
		circuitMoved(CircuitHalfOpen)
	}
	return started, err
}

// RetrySent is one attempt a retry job made of a stored delivery.
type RetrySent struct {
	Delivery Delivery
	Sent
}

// RecordRetry records a retry job's run in one transaction: its attempts, what
// they made of their deliveries and of the circuit, and the job that comes
// next. more says the run stopped with due deliveries left (its time or batch
// was up), so its successor runs at once (a capped subscription's waits its
// pace before its first send). It returns how many deliveries went DEAD.
func (st Store) RecordRetry(
	ctx context.Context,
	shard *tenant.Shard,
	ws, subID uuid.UUID,
	job int64,
	sent []RetrySent,
	more bool,
	schedule []time.Duration,
) (dead int, err error) {
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		dead = 0
		now := time.Now()
		sub, err := lockSub(ctx, tx, ws, nil, subID)
		if err != nil {
			return err
		}
		attempts := make([]Attempt, len(sent))
		h := sub.Health
		disable := ""
		for i, s := range sent {
			v := Judge(s.Delivery.Attempts+1, s.Result, schedule, s.At)
			attempts[i] = Attempt{
				Delivery:   s.Delivery.ID,
				OccurredAt: s.Delivery.When(),
				Number:     s.Delivery.Attempts + 1,
				At:         s.At,
				Result:     s.Result,
				Verdict:    v,
			}
			if v.Status == StatusDead {
				dead++
			}
			if v.Disable != "" {
				disable = v.Disable
			}
			h = st.CircuitBreaker().After(h, s.Result.OK(), now)
		}
		if disable == "" && len(sent) > 0 && !sent[len(sent)-1].Result.OK() && FailedTooLong(h.FailingSince, now) {
			disable = "every delivery failed for 5 days"
		}
		b := &pgx.Batch{}
		queueMoves(b, ws, attempts)
		if h != sub.Health {
			queueHealth(b, ws, sub.ID, h)
			if h.Circuit != sub.Health.Circuit {
				circuitMoved(h.Circuit)
			}
		}
		var next *time.Time
		owner := sub.RetryJobID != nil && *sub.RetryJobID == job
		if h.Closed() && !sub.Health.Closed() {
			// The probe succeeded: the endpoint is back, and what waits for
			// a later retry need not wait any more.
			b.Queue(`update webhook_deliveries set next_attempt_at = $3 where workspace_id = $1 and subscription_id = $2
				and status in ('PENDING', 'RETRYING') and next_attempt_at > $3`, ws, sub.ID, now)
		}
		if owner && disable == "" && sub.Status == "ACTIVE" {
			b.Queue(`select min(next_attempt_at) from webhook_deliveries where workspace_id = $1 and subscription_id = $2
				and status in ('PENDING', 'RETRYING')`, ws, sub.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&next) })
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		sub.Health = h
		switch {
		case disable != "":
			_, err := st.setStatusTx(ctx, tx, shard, ws, sub, "DISABLED", disable, job)
			return err
		case !owner:
			// Replaced or cleared meanwhile: whoever did it owns what comes next.
			return nil
		}
		if more && next != nil {
			next = &now
		}
		if next != nil && !h.Closed() && h.ProbeAt != nil && next.Before(*h.ProbeAt) {
			next = h.ProbeAt
		}
		if next == nil {
			_, err := tx.Exec(
				ctx,
				"update webhook_subscriptions set retry_job_id = null, retry_at = null where workspace_id = $1 and id = $2",
				ws,
				sub.ID,
			)
			return err
		}
		// This job is finishing: its successor replaces it without cancelling it.
		sub.RetryJobID, sub.RetryAt = nil, nil
		return st.scheduleRetry(ctx, tx, shard, ws, sub, *next, false)
	})
	return dead, err
}

// Adopt hands a delivery queued by a version that gave each delivery a job of
// its own to its subscription's retry job, due at once.
func (st Store) Adopt(ctx context.Context, shard *tenant.Shard, ws, delivery uuid.UUID) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var subID uuid.UUID
		var status string
		err := tx.QueryRow(ctx, `select subscription_id, status from webhook_deliveries
			where workspace_id = $1 and id = $2`, ws, delivery).
			Scan(&subID, &status)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && status != StatusPending && status != StatusRetrying) {
			return nil
		}
		if err != nil {
			return err
		}
		sub, err := lockSub(ctx, tx, ws, nil, subID)
		if err != nil || sub.Status != "ACTIVE" {
			return err
		}
		now := time.Now()
		if _, err := tx.Exec(ctx, "update webhook_deliveries set next_attempt_at = $3 where workspace_id = $1 and id = $2",
			ws, delivery, now); err != nil {
			return err
		}
		return st.scheduleRetry(ctx, tx, shard, ws, sub, now, false)
	})
}

// Overdue lists a workspace's subscriptions whose waiting deliveries have
// been due for longer than after, with the retry job each names (nil for
// none): the sweeper re-queues those whose job is gone (on Citus a
// coordinator that died between its two commits can lose it).
func (st Store) Overdue(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	after time.Duration,
) (map[uuid.UUID]*int64, error) {
	out := map[uuid.UUID]*int64{}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select s.id, s.retry_job_id from webhook_subscriptions s where s.workspace_id = $1 and s.status = 'ACTIVE'
			and exists (select 1 from webhook_deliveries d where d.workspace_id = $1 and d.subscription_id = s.id
				and d.status in ('PENDING', 'RETRYING') and d.next_attempt_at < now() - make_interval(secs => $2))`,
			ws, after.Seconds()).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var id uuid.UUID
				var job *int64
				if err := rows.Scan(&id, &job); err != nil {
					return err
				}
				out[id] = job
			}
			return rows.Err()
		})
	})
	return out, err
}

// Requeue gives a subscription whose retry job is gone a new one, due at once;
// it changes nothing when the subscription meanwhile names another job than
// lost.
func (st Store) Requeue(ctx context.Context, shard *tenant.Shard, ws, subID uuid.UUID, lost *int64) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		sub, err := lockSub(ctx, tx, ws, nil, subID)
		if err != nil || sub.Status != "ACTIVE" || (sub.RetryJobID == nil) != (lost == nil) ||
			(lost != nil && *sub.RetryJobID != *lost) {
			return err
		}
		sub.RetryJobID, sub.RetryAt = nil, nil
		return st.scheduleRetry(ctx, tx, shard, ws, sub, time.Now(), false)
	})
}
