package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// Delivery is a stored delivery.
type Delivery struct {
	ID             uuid.UUID
	SubscriptionID uuid.UUID
	ClientID       string
	EventType      string
	Data           []byte
	Status         string
	Attempts       int
	NextAttemptAt  *time.Time
	LastStatus     *int
	ReplayOf       *uuid.UUID
	CreatedAt      time.Time
	CompletedAt    *time.Time
}

// ToDeliveryView converts a delivery.
func ToDeliveryView(d Delivery) DeliveryView {
	v := DeliveryView{ID: pmapi.FormatID(DeliveryPrefix, d.ID), SubscriptionID: pmapi.FormatID(SubscriptionPrefix, d.SubscriptionID),
		EventType: d.EventType, Status: d.Status, Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt, LastStatus: d.LastStatus,
		CreatedAt: d.CreatedAt, CompletedAt: d.CompletedAt}
	if d.ReplayOf != nil {
		s := pmapi.FormatID(DeliveryPrefix, *d.ReplayOf)
		v.ReplayOf = &s
	}
	return v
}

const deliveryColumns = `d.id, d.subscription_id, d.client_id, d.event_type, d.data, d.status, d.attempts, d.next_attempt_at,
	d.last_status, d.replay_of, d.created_at, d.completed_at`

func scanDelivery(row pgx.Row) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.SubscriptionID, &d.ClientID, &d.EventType, &d.Data, &d.Status, &d.Attempts, &d.NextAttemptAt,
		&d.LastStatus, &d.ReplayOf, &d.CreatedAt, &d.CompletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, pmapi.NotFound("delivery")
	}
	return d, err
}

// ForAttempt loads a delivery and its subscription for a delivery attempt.
func (st Store) ForAttempt(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Delivery, Subscription, error) {
	var d Delivery
	var s Subscription
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+deliveryColumns+" from webhook_deliveries d where d.workspace_id = $1 and d.id = $2", ws, id).QueryRow(func(r pgx.Row) error {
			var err error
			d, err = scanDelivery(r)
			return err
		})
		b.Queue("select "+subColumns+` from webhook_subscriptions s join webhook_deliveries d on d.workspace_id = s.workspace_id
			and d.subscription_id = s.id where s.workspace_id = $1 and d.id = $2`, ws, id).QueryRow(func(r pgx.Row) error {
			var err error
			s, err = scanSub(r)
			return err
		})
	})
	return d, s, err
}

// Outcome is what an attempt decided.
type Outcome struct {
	Attempt   int
	Result    Result
	Status    string     // the delivery's status after it
	NextAt    *time.Time // for RETRYING
	DisableOn string     // a reason to disable the subscription, or ""
}

// FailingFor is how long a subscription may fail every delivery before it is
// disabled.
const FailingFor = 5 * 24 * time.Hour

// Record logs an attempt and moves the delivery (and, on failures, the
// subscription's failing-since clock) in one transaction. It returns whether the
// subscription was disabled by it.
func (st Store) Record(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, d Delivery, o Outcome) (disabled bool, err error) {
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		disabled = false
		r := o.Result
		outcome := "failed"
		switch {
		case r.OK():
			outcome = "succeeded"
		case r.Blocked:
			outcome = "blocked"
		}
		var code *int
		if r.Status != 0 {
			code = &r.Status
		}
		var errText, snippet *string
		if r.Err != nil {
			s := r.Err.Error()
			errText = &s
		}
		if r.Snippet != "" {
			snippet = &r.Snippet
		}
		// One round trip for the subscription, the attempt and the delivery,
		// in the order a disable locks them (setStatusTx: the subscription,
		// then its deliveries), so the two never wait on each other in a cycle.
		b := &pgx.Batch{}
		var since time.Time
		if r.OK() {
			// Only a failing subscription is written: every success rewriting
			// the row made concurrent deliveries to it queue for its lock.
			b.Queue("update webhook_subscriptions set failing_since = null where workspace_id = $1 and id = $2 and failing_since is not null",
				ws, d.SubscriptionID)
		} else {
			// The streak's first failure stays: least ignores a NULL, and unlike
			// coalesce(failing_since, now()) Citus accepts it in an UPDATE.
			b.Queue(`update webhook_subscriptions set failing_since = least(failing_since, now())
				where workspace_id = $1 and id = $2 returning failing_since`, ws, d.SubscriptionID).QueryRow(func(row pgx.Row) error { return row.Scan(&since) })
		}
		b.Queue(`insert into webhook_attempts (workspace_id, id, delivery_id, attempt, outcome, status_code, latency_ms, response_snippet, error)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, ws, pmapi.NewID(), d.ID, o.Attempt, outcome, code, float64(r.Latency.Microseconds())/1000, snippet, errText)
		// Go picks completed_at's statement: Citus refuses now() in CASE of an
		// UPDATE.
		completedAt := "null"
		if o.Status == "SUCCEEDED" || o.Status == "DEAD" {
			completedAt = "now()"
		}
		b.Queue(`update webhook_deliveries set status = $3, attempts = $4, last_status = $5, next_attempt_at = $6,
			completed_at = `+completedAt+`
			where workspace_id = $1 and id = $2 and status not in ('CANCELLED', 'SUCCEEDED', 'DEAD')`,
			ws, d.ID, o.Status, o.Attempt, code, o.NextAt)
		if err := tx.SendBatch(ctx, b).Close(); err != nil || r.OK() {
			return err
		}
		reason := o.DisableOn
		if reason == "" && time.Since(since) >= FailingFor {
			reason = "every delivery failed for 5 days"
		}
		if reason == "" {
			return nil
		}
		disabled = true
		_, err := st.setStatusTx(ctx, tx, shard, ws, nil, d.SubscriptionID, "DISABLED", reason)
		return err
	})
	return disabled, err
}

// DeliveryFilter selects an app's deliveries.
type DeliveryFilter struct {
	ClientID       string
	SubscriptionID *uuid.UUID
	Status         string
	EventType      string
	Since          *time.Time
	Before         *uuid.UUID
	Limit          int
}

// Deliveries returns a page of the app's deliveries, newest first.
func (st Store) Deliveries(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f DeliveryFilter) ([]Delivery, error) {
	where := []string{"d.workspace_id = $1", "d.client_id = $2"}
	args := []any{ws, f.ClientID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if f.SubscriptionID != nil {
		add("d.subscription_id = ?", *f.SubscriptionID)
	}
	if f.Status != "" {
		add("d.status = ?", f.Status)
	}
	if f.EventType != "" {
		add("d.event_type = ?", f.EventType)
	}
	if f.Since != nil {
		add("d.created_at >= ?", *f.Since)
	}
	if f.Before != nil {
		add("d.id < ?", *f.Before)
	}
	args = append(args, f.Limit)
	sql := fmt.Sprintf("select %s from webhook_deliveries d where %s order by d.id desc limit $%d", deliveryColumns, strings.Join(where, " and "), len(args))
	var out []Delivery
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				d, err := scanDelivery(rows)
				if err != nil {
					return err
				}
				out = append(out, d)
			}
			return rows.Err()
		})
	})
	return out, err
}

// Detail returns one of the app's deliveries with its attempt log.
func (st Store) Detail(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID) (Delivery, []AttemptView, error) {
	var d Delivery
	var attempts []AttemptView
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+deliveryColumns+" from webhook_deliveries d where d.workspace_id = $1 and d.client_id = $2 and d.id = $3", ws, clientID, id).
			QueryRow(func(r pgx.Row) error {
				var err error
				d, err = scanDelivery(r)
				return err
			})
		b.Queue(`select a.attempt, a.at, a.outcome, a.status_code, a.latency_ms, a.response_snippet, a.error from webhook_attempts a
			join webhook_deliveries d on d.workspace_id = a.workspace_id and d.id = a.delivery_id
			where a.workspace_id = $1 and d.client_id = $2 and a.delivery_id = $3 order by a.id`, ws, clientID, id).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var a AttemptView
				if err := rows.Scan(&a.Attempt, &a.At, &a.Outcome, &a.StatusCode, &a.LatencyMS, &a.ResponseSnippet, &a.Error); err != nil {
					return err
				}
				attempts = append(attempts, a)
			}
			return rows.Err()
		})
	})
	return d, attempts, err
}

// Replay makes new deliveries of the same events (replayOf names each
// original), queued at once. Only the app's own deliveries can be replayed, and
// only to an ACTIVE subscription.
func (st Store) Replay(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, originals []uuid.UUID) ([]Delivery, error) {
	var out []Delivery
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		out = nil
		var ids []uuid.UUID
		for _, o := range originals {
			orig, err := scanDelivery(tx.QueryRow(ctx, "select "+deliveryColumns+" from webhook_deliveries d where d.workspace_id = $1 and d.client_id = $2 and d.id = $3",
				ws, clientID, o))
			if err != nil {
				return err
			}
			var status string
			if err := tx.QueryRow(ctx, "select status from webhook_subscriptions where workspace_id = $1 and id = $2", ws, orig.SubscriptionID).Scan(&status); err != nil {
				return err
			}
			if status != "ACTIVE" {
				return pmapi.Errorf(pmapi.CodeConflict, "the subscription is disabled; enable it before replaying")
			}
			d, err := scanDelivery(tx.QueryRow(ctx, `insert into webhook_deliveries as d (workspace_id, id, subscription_id, client_id, event_type, data, replay_of)
				values ($1, $2, $3, $4, $5, $6, $7) returning `+deliveryColumns, ws, pmapi.NewID(), orig.SubscriptionID, clientID, orig.EventType, orig.Data, orig.ID))
			if err != nil {
				return err
			}
			ids = append(ids, d.ID)
			out = append(out, d)
		}
		b := &pgx.Batch{}
		if err := st.enqueue(ctx, tx, b, shard, ws, ids); err != nil || b.Len() == 0 {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	return out, err
}

// FailedSince lists the app's DEAD or cancelled deliveries of a subscription
// created since a time, for bulk recovery.
func (st Store) FailedSince(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, sub uuid.UUID, since time.Time) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	found := false
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select exists(select 1 from webhook_subscriptions where workspace_id = $1 and client_id = $2 and id = $3)", ws, clientID, sub).
			QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		b.Queue(`select id from webhook_deliveries where workspace_id = $1 and client_id = $2 and subscription_id = $3 and created_at >= $4
			and status in ('DEAD', 'CANCELLED') order by id limit 1000`, ws, clientID, sub, since).Query(func(rows pgx.Rows) error {
			var err error
			ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			return err
		})
	})
	if err == nil && !found {
		return nil, pmapi.NotFound("subscription")
	}
	return ids, err
}

// NewTestDelivery records a webhook.test delivery to send synchronously.
func (st Store) NewTestDelivery(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, sub uuid.UUID) (Delivery, Subscription, error) {
	var d Delivery
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		if s, err = scanSub(tx.QueryRow(ctx, "select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.client_id = $2 and s.id = $3", ws, clientID, sub)); err != nil {
			return err
		}
		data, _ := json.Marshal(map[string]string{"subscriptionId": pmapi.FormatID(SubscriptionPrefix, sub), "message": "This is a test delivery from pmapi."})
		d, err = scanDelivery(tx.QueryRow(ctx, `insert into webhook_deliveries as d (workspace_id, id, subscription_id, client_id, event_type, data)
			values ($1, $2, $3, $4, 'webhook.test', $5) returning `+deliveryColumns, ws, pmapi.NewID(), sub, clientID, data))
		return err
	})
	return d, s, err
}

// QueueStats reports the deliveries waiting on a shard: how many, and the age of
// the oldest, for the queue-depth and lag gauges.
func QueueStats(ctx context.Context, shard *tenant.Shard) (depth int64, oldest time.Duration, err error) {
	var at *time.Time
	err = shard.Pool.QueryRow(ctx, `select count(*), min(scheduled_at) from river.river_job
		where kind = 'webhook.deliver' and state in ('available', 'scheduled', 'retryable', 'running')`).Scan(&depth, &at)
	if at != nil && time.Since(*at) > 0 {
		oldest = time.Since(*at)
	}
	return depth, oldest, err
}
