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
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

// Delivery is a stored delivery.
type Delivery struct {
	ID             uuid.UUID
	SubscriptionID uuid.UUID
	ClientID       string
	// EventID and OccurredAt are the event's; rows from before they were
	// kept have neither (Event and When fall back).
	EventID       *uuid.UUID
	OccurredAt    *time.Time
	EventType     string
	Data          []byte
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	LastStatus    *int
	ReplayOf      *uuid.UUID
	CreatedAt     time.Time
	CompletedAt   *time.Time
}

// Event is the id of the event delivered: the delivery's own for a row that
// predates event ids on replays and test deliveries.
func (d Delivery) Event() uuid.UUID {
	if d.EventID != nil {
		return *d.EventID
	}
	return d.ID
}

// When is when the event's change was written (the delivery's creation for
// rows that predate it).
func (d Delivery) When() time.Time {
	if d.OccurredAt != nil {
		return *d.OccurredAt
	}
	return d.CreatedAt
}

// ToDeliveryView converts a delivery.
func ToDeliveryView(d Delivery) DeliveryView {
	v := DeliveryView{
		ID:             pmapi.FormatID(DeliveryPrefix, d.ID),
		SubscriptionID: pmapi.FormatID(SubscriptionPrefix, d.SubscriptionID),
		EventID: pmapi.FormatID(
			EventPrefix,
			d.Event(),
		),
		OccurredAt:    d.When().UTC(),
		EventType:     d.EventType,
		Status:        d.Status,
		Attempts:      d.Attempts,
		NextAttemptAt: d.NextAttemptAt,
		LastStatus:    d.LastStatus,
		CreatedAt:     d.CreatedAt,
		CompletedAt:   d.CompletedAt,
	}
	if d.ReplayOf != nil {
		s := pmapi.FormatID(DeliveryPrefix, *d.ReplayOf)
		v.ReplayOf = &s
	}
	return v
}

const deliveryColumns = `d.id, d.subscription_id, d.client_id, d.event_id, d.occurred_at, d.event_type, d.data,
	d.status, d.attempts, d.next_attempt_at, d.last_status, d.replay_of, d.created_at, d.completed_at`

// scanDeliveryRow scans deliveryColumns alone, as a storekit.Scan.
func scanDeliveryRow(row pgx.Row) (Delivery, error) { return scanDelivery(row) }

// scanDelivery scans deliveryColumns and then, into more, the columns a
// statement selects after them.
func scanDelivery(row pgx.Row, more ...any) (Delivery, error) {
	var d Delivery
	err := row.Scan(
		append(
			[]any{
				&d.ID,
				&d.SubscriptionID,
				&d.ClientID,
				&d.EventID,
				&d.OccurredAt,
				&d.EventType,
				&d.Data,
				&d.Status,
				&d.Attempts,
				&d.NextAttemptAt,
				&d.LastStatus,
				&d.ReplayOf,
				&d.CreatedAt,
				&d.CompletedAt,
			},
			more...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, pmapi.NotFound("delivery")
	}
	return d, err
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
func (st Store) Deliveries(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	f DeliveryFilter,
) ([]Delivery, error) {
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
	sql := fmt.Sprintf(
		"select %s from webhook_deliveries d where %s order by d.id desc limit $%d",
		deliveryColumns,
		strings.Join(where, " and "),
		len(args),
	)
	return storekit.List(ctx, shard, ws, scanDeliveryRow, sql, args...)
}

// deliveryDetailSQL reads one of the app's deliveries with its attempt log:
// the row's own (attempt_log) and, for a delivery written before it (migration
// 0017), the attempts kept in webhook_attempts, in the log's form; one
// statement on one shard, the subquery naming the workspace parameter itself
// and the delivery's partition key, so it reads the one partition.
const deliveryDetailSQL = `select ` + deliveryColumns + `, d.attempt_log,
	(select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'at', a.at, 'outcome', a.outcome,
		'statusCode', a.status_code, 'latencyMs', a.latency_ms, 'responseSnippet', a.response_snippet,
		'error', a.error) order by a.id)
		from webhook_attempts a where a.workspace_id = $1 and a.delivery_id = $3
			and a.delivery_occurred_at = d.occurred_at)
	from webhook_deliveries d where d.workspace_id = $1 and d.client_id = $2 and d.id = $3`

// Detail returns one of the app's deliveries with its attempt log, oldest
// first: attempts kept in webhook_attempts (before migration 0017) come
// before those in the row's log, which began after them.
func (st Store) Detail(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
) (Delivery, []AttemptView, error) {
	var d Delivery
	var attempts []AttemptView
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(deliveryDetailSQL, ws, clientID, id).QueryRow(func(r pgx.Row) error {
			var log, old []byte
			var err error
			if d, err = scanDelivery(r, &log, &old); err != nil {
				return err
			}
			if attempts, err = readLog(nil, old); err != nil {
				return err
			}
			attempts, err = readLog(attempts, log)
			return err
		})
	})
	return d, attempts, err
}

// Replay makes new deliveries of the same events (replayOf names each
// original; eventId and occurredAt stay the event's), waiting for the
// subscription's retry job, which is queued to run at once. Only the app's own
// deliveries can be replayed, and only to an ACTIVE subscription.
func (st Store) Replay(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	originals []uuid.UUID,
) ([]Delivery, error) {
	var out []Delivery
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		out = nil
		origs := make([]Delivery, 0, len(originals))
		for _, o := range originals {
			orig, err := scanDelivery(
				tx.QueryRow(
					ctx,
					"select "+deliveryColumns+" from webhook_deliveries d "+
						"where d.workspace_id = $1 and d.client_id = $2 and d.id = $3",
					ws,
					clientID,
					o,
				),
			)
			if err != nil {
				return err
			}
			if orig.EventID == nil && orig.ReplayOf != nil {
				// A replay from before event ids were kept: its original has one.
				if err := tx.QueryRow(ctx, `select event_id, occurred_at from webhook_deliveries
					where workspace_id = $1 and id = $2`, ws, *orig.ReplayOf).
					Scan(&orig.EventID, &orig.OccurredAt); err != nil {
					return err
				}
			}
			origs = append(origs, orig)
		}
		locked := map[uuid.UUID]Subscription{}
		now := time.Now()
		for _, orig := range origs {
			sub, ok := locked[orig.SubscriptionID]
			if !ok {
				var err error
				if sub, err = lockSub(ctx, tx, ws, nil, orig.SubscriptionID); err != nil {
					return err
				}
				if sub.Status != "ACTIVE" {
					return pmapi.Errorf(pmapi.CodeConflict, "the subscription is disabled; enable it before replaying")
				}
				locked[sub.ID] = sub
			}
			event, when := orig.Event(), orig.When()
			d, err := scanDelivery(
				tx.QueryRow(ctx, `insert into webhook_deliveries as d (workspace_id, id, subscription_id, client_id, event_id,
					occurred_at, event_type, data, replay_of, next_attempt_at)
				values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning `+deliveryColumns,
					ws, pmapi.NewID(), orig.SubscriptionID, clientID, event, when, orig.EventType, orig.Data, orig.ID, now),
			)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		for _, sub := range locked {
			if err := st.scheduleRetry(ctx, tx, shard, ws, sub, now, false); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// FailedSince lists the app's DEAD or cancelled deliveries of a subscription
// created since a time, for bulk recovery. Unless includeReplayed, a delivery
// whose event has a newer delivery to the subscription since then (a replay)
// is left out: each event is replayed once, from its newest failed delivery,
// however often the recovery is run.
func (st Store) FailedSince(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	sub uuid.UUID,
	since time.Time,
	includeReplayed bool,
) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	found := false
	// The subquery names the workspace parameter itself (Citus keeps it on
	// one shard); rows from before event ids were kept match by replay_of.
	replayed := `and not exists (select 1 from webhook_deliveries r where r.workspace_id = $1 and r.subscription_id = $3
		and r.replay_of is not null and r.created_at >= $4 and r.id > d.id
		and (r.event_id = d.event_id or r.replay_of = d.id))`
	if includeReplayed {
		replayed = ""
	}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select exists(select 1 from webhook_subscriptions
			where workspace_id = $1 and client_id = $2 and id = $3)`, ws, clientID, sub).
			QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		b.Queue(`select d.id from webhook_deliveries d
			where d.workspace_id = $1 and d.client_id = $2 and d.subscription_id = $3 and d.created_at >= $4
			and d.status in ('DEAD', 'CANCELLED') `+replayed+` order by d.id limit 1000`, ws, clientID, sub, since).
			Query(func(rows pgx.Rows) error {
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
func (st Store) NewTestDelivery(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	sub uuid.UUID,
) (Delivery, Subscription, error) {
	var d Delivery
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		if s, err = scanSub(tx.QueryRow(ctx, "select "+subColumns+" from webhook_subscriptions s "+
			"where s.workspace_id = $1 and s.client_id = $2 and s.id = $3", ws, clientID, sub)); err != nil {
			return err
		}
		data, _ := json.Marshal(
			map[string]string{
				"subscriptionId": pmapi.FormatID(SubscriptionPrefix, sub),
				"message":        "This is a test delivery from pmapi.",
			},
		)
		// A test is an event of its own: no event row, but an id and a time.
		d, err = scanDelivery(
			tx.QueryRow(ctx, `insert into webhook_deliveries as d (workspace_id, id, subscription_id, client_id, event_id,
			occurred_at, event_type, data) values ($1, $2, $3, $4, $5, now(), 'webhook.test', $6) returning `+deliveryColumns,
				ws, pmapi.NewID(), sub, clientID, pmapi.NewID(), data),
		)
		return err
	})
	return d, s, err
}

// RecordTest logs the attempt of a test delivery and finishes it: SUCCEEDED,
// or DEAD since a test is never retried. A test is a person's check, not
// traffic: it leaves the circuit and the failing streak alone.
func (st Store) RecordTest(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, d Delivery, s Sent) error {
	v := Verdict{Status: StatusSucceeded}
	if !s.Result.OK() {
		v.Status = StatusDead
	}
	a := []Attempt{{Delivery: d.ID, OccurredAt: d.When(), Number: 1, At: s.At, Result: s.Result, Verdict: v}}
	return shard.Batch(ctx, ws, func(b *pgx.Batch) { queueMoves(b, ws, a) })
}
