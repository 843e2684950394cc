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
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/tenant"
)

// Jobs queues and cancels delivery jobs inside the caller's transaction.
type Jobs interface {
	Deliver(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, deliveries []uuid.UUID) ([]int64, error)
	Cancel(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, jobIDs []int64) error
}

// Store reads and writes subscriptions and deliveries.
type Store struct {
	Events event.Emitter
	Jobs   Jobs
	Box    *seal.Box
}

// Subscription is a stored subscription.
type Subscription struct {
	ID                 uuid.UUID
	ClientID           string
	URL                string
	Events             []string
	Status             string
	SecretPrefix       string
	PreviousValidUntil *time.Time
	DisabledReason     *string
	FailingSince       *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DisabledAt         *time.Time
	secret, previous   []byte
}

// ToView converts a subscription (never its secrets).
func ToView(s Subscription) SubscriptionView {
	return SubscriptionView{ID: pmapi.FormatID(SubscriptionPrefix, s.ID), ClientID: s.ClientID, URL: s.URL, Events: s.Events,
		Status: s.Status, SecretPrefix: s.SecretPrefix, PreviousValidUntil: s.PreviousValidUntil, DisabledReason: s.DisabledReason,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, DisabledAt: s.DisabledAt}
}

const subColumns = `s.id, s.client_id, s.url, s.events, s.status, s.secret_prefix, s.previous_valid_until, s.disabled_reason,
	s.failing_since, s.created_at, s.updated_at, s.disabled_at, s.secret_sealed, s.previous_secret_sealed`

func scanSub(row pgx.Row) (Subscription, error) {
	var s Subscription
	err := row.Scan(&s.ID, &s.ClientID, &s.URL, &s.Events, &s.Status, &s.SecretPrefix, &s.PreviousValidUntil, &s.DisabledReason,
		&s.FailingSince, &s.CreatedAt, &s.UpdatedAt, &s.DisabledAt, &s.secret, &s.previous)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, pmapi.NotFound("subscription")
	}
	return s, err
}

// Secrets opens the secrets that sign a delivery now: the current one and,
// during a rotation's grace, the previous one.
func (st Store) Secrets(s Subscription, now time.Time) ([]string, error) {
	cur, err := st.Box.Open(s.secret)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if s.previous != nil && s.PreviousValidUntil != nil && now.Before(*s.PreviousValidUntil) {
		prev, err := st.Box.Open(s.previous)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// NewSecret makes a whsec_ secret: 32 random bytes' worth (43 base62 characters).
func NewSecret() string { return SecretPrefix + pmapi.RandomBase62(43) }

// Create subscribes url for the app's events; the secret is returned once.
func (st Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID, url string, events []string) (Subscription, string, error) {
	secret := NewSecret()
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, "select exists(select 1 from apps where workspace_id = $1 and client_id = $2)", ws, clientID).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return pmapi.NotFound("app")
		}
		var err error
		s, err = scanSub(tx.QueryRow(ctx, `insert into webhook_subscriptions as s (workspace_id, id, client_id, url, events, secret_sealed, secret_prefix)
			values ($1, $2, $3, $4, $5, $6, $7) returning `+subColumns, ws, pmapi.NewID(), clientID, url, events, st.Box.Seal(secret), secret[:12]))
		return err
	})
	return s, secret, err
}

// List returns an app's subscriptions, oldest first.
func (st Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string) ([]Subscription, error) {
	var out []Subscription
	found := false
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select exists(select 1 from apps where workspace_id = $1 and client_id = $2)", ws, clientID).QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		b.Queue("select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.client_id = $2 order by s.id", ws, clientID).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					s, err := scanSub(rows)
					if err != nil {
						return err
					}
					out = append(out, s)
				}
				return rows.Err()
			})
	})
	if err == nil && !found {
		return nil, pmapi.NotFound("app")
	}
	return out, err
}

// Get returns one subscription of the app.
func (st Store) Get(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID) (Subscription, error) {
	var s Subscription
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+subColumns+" from webhook_subscriptions s where s.workspace_id = $1 and s.client_id = $2 and s.id = $3", ws, clientID, id).
			QueryRow(func(r pgx.Row) error {
				var err error
				s, err = scanSub(r)
				return err
			})
	})
	return s, err
}

// SetStatus enables or disables a subscription. Disabling stops delivery at once:
// its pending deliveries are CANCELLED and their River jobs cancelled in the same
// transaction; the row is kept.
func (st Store) SetStatus(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID, status, reason string) (Subscription, error) {
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		s, err = st.setStatusTx(ctx, tx, shard, ws, &clientID, id, status, reason)
		return err
	})
	return s, err
}

func (st Store) setStatusTx(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, clientID *string, id uuid.UUID, status, reason string) (Subscription, error) {
	cur, err := scanSub(tx.QueryRow(ctx, `select `+subColumns+` from webhook_subscriptions s where s.workspace_id = $1 and s.id = $2
		and ($3::text is null or s.client_id = $3) for update`, ws, id, clientID))
	if err != nil || cur.Status == status {
		return cur, err
	}
	var why *string
	if status == "DISABLED" {
		why = &reason
		rows, err := tx.Query(ctx, `update webhook_deliveries set status = 'CANCELLED', completed_at = now(), next_attempt_at = null
			where workspace_id = $1 and subscription_id = $2 and status in ('PENDING', 'RETRYING') returning job_id`, ws, id)
		if err != nil {
			return cur, err
		}
		jobs, err := pgx.CollectRows(rows, pgx.RowTo[*int64])
		if err != nil {
			return cur, err
		}
		var ids []int64
		for _, j := range jobs {
			if j != nil {
				ids = append(ids, *j)
			}
		}
		if err := st.Jobs.Cancel(ctx, tx, shard, ids); err != nil {
			return cur, err
		}
	}
	// Go picks disabled_at's statement: Citus refuses now() in CASE of an UPDATE.
	disabledAt := "null"
	if status == "DISABLED" {
		disabledAt = "now()"
	}
	s, err := scanSub(tx.QueryRow(ctx, `update webhook_subscriptions s set status = $3, disabled_reason = $4, failing_since = null,
		disabled_at = `+disabledAt+`, updated_at = now()
		where s.workspace_id = $1 and s.id = $2 returning `+subColumns, ws, id, status, why))
	if err != nil {
		return s, err
	}
	typ := "webhook.enabled"
	if status == "DISABLED" {
		typ = "webhook.disabled"
	}
	return s, st.Events.Emit(ctx, tx, shard, ws, event.Event{Type: typ, Data: DisabledEvent{SubscriptionID: pmapi.FormatID(SubscriptionPrefix, id), Reason: reason}})
}

// Rotate gives the subscription a new secret; the old one keeps signing
// alongside until grace has passed.
func (st Store) Rotate(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID, grace time.Duration) (Subscription, string, error) {
	secret := NewSecret()
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		// Go picks whether the old secret lives on: Citus refuses now() in
		// CASE of an UPDATE.
		previous := "previous_secret_sealed = null, previous_valid_until = null"
		args := []any{ws, id, st.Box.Seal(secret), secret[:12], clientID}
		if grace > 0 {
			previous = "previous_secret_sealed = secret_sealed, previous_valid_until = now() + make_interval(secs => $6)"
			args = append(args, grace.Seconds())
		}
		var err error
		s, err = scanSub(tx.QueryRow(ctx, `update webhook_subscriptions s set `+previous+`,
			secret_sealed = $3, secret_prefix = $4, updated_at = now()
			where s.workspace_id = $1 and s.client_id = $5 and s.id = $2 returning `+subColumns, args...))
		return err
	})
	return s, secret, err
}

// AppInUse reports whether the app has an active subscription, which keeps it
// from being deleted (authz.DeleteApp asks, inside its transaction).
func AppInUse(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (bool, error) {
	var active bool
	err := tx.QueryRow(ctx, `select exists(select 1 from webhook_subscriptions where workspace_id = $1 and client_id = $2 and status = 'ACTIVE')`,
		ws, clientID).Scan(&active)
	return active, err
}

// matches reports whether a subscription wants an event type.
func matches(events []string, typ string) bool {
	for _, e := range events {
		if e == "*" || e == typ {
			return true
		}
	}
	return false
}

// Fanout creates one delivery per event and ACTIVE subscription of the
// workspace that wants it, with its delivery job, in one transaction; events
// already fanned out are skipped, so a repeated call adds nothing. The round
// trips are the same for one event or many: reads in one batch, deliveries in
// one insert, their jobs in one River insert, the marks in one batch.
func (st Store) Fanout(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, eventIDs ...uuid.UUID) (int, error) {
	if len(eventIDs) == 0 {
		return 0, nil
	}
	created := 0
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		created = 0
		type ev struct {
			id   uuid.UUID
			typ  string
			data []byte
		}
		type sub struct {
			id     uuid.UUID
			client string
			events []string
		}
		var evs []ev
		var subs []sub
		b := &pgx.Batch{}
		// The lock makes a concurrent run of the same job wait, then skip.
		b.Queue("select id, type, data from events where workspace_id = $1 and id = any($2) and fanned_out_at is null order by id for update",
			ws, eventIDs).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var e ev
				if err := rows.Scan(&e.id, &e.typ, &e.data); err != nil {
					return err
				}
				evs = append(evs, e)
			}
			return rows.Err()
		})
		b.Queue("select id, client_id, events from webhook_subscriptions where workspace_id = $1 and status = 'ACTIVE' order by id", ws).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var s sub
					if err := rows.Scan(&s.id, &s.client, &s.events); err != nil {
						return err
					}
					subs = append(subs, s)
				}
				return rows.Err()
			})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		var ids []uuid.UUID
		var rows [][]any
		for _, e := range evs {
			for _, s := range subs {
				if matches(s.events, e.typ) {
					id := pmapi.NewID()
					ids = append(ids, id)
					rows = append(rows, []any{id, s.id, s.client, e.id, e.typ, e.data})
				}
			}
		}
		// Multi-row VALUES, in one batch: Citus would ship INSERT ... SELECT
		// (unnest included) with COPY, which row-level security refuses.
		fresh := make(map[uuid.UUID]bool, len(ids))
		b = &pgx.Batch{}
		for start := 0; start < len(rows); start += deliveriesPerInsert {
			chunk := rows[start:min(start+deliveriesPerInsert, len(rows))]
			sql, args := insertDeliveries(ws, chunk)
			b.Queue(sql, args...).Query(func(r pgx.Rows) error {
				got, err := pgx.CollectRows(r, pgx.RowTo[uuid.UUID])
				for _, id := range got {
					fresh[id] = true
				}
				return err
			})
		}
		if b.Len() > 0 {
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
		}
		// Jobs are queued in event order, which RETURNING does not promise.
		var inserted []uuid.UUID
		for _, id := range ids {
			if fresh[id] {
				inserted = append(inserted, id)
			}
		}
		marked := make([]uuid.UUID, len(evs))
		for i, e := range evs {
			marked[i] = e.id
		}
		created = len(inserted)
		// The job ids and the marks travel in one round trip.
		b = &pgx.Batch{}
		if err := st.enqueue(ctx, tx, b, shard, ws, inserted); err != nil {
			return err
		}
		b.Queue("update events set fanned_out_at = now() where workspace_id = $1 and id = any($2)", ws, marked)
		return tx.SendBatch(ctx, b).Close()
	})
	return created, err
}

// deliveriesPerInsert bounds one INSERT's rows (six parameters each) well
// under PostgreSQL's 65535 parameters.
const deliveriesPerInsert = 1000

// insertDeliveries writes rows (id, subscription, client, event, type, data)
// as one multi-row VALUES insert; $1 is the workspace.
func insertDeliveries(ws uuid.UUID, rows [][]any) (string, []any) {
	var sql strings.Builder
	sql.WriteString(`insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id, event_type, data) values `)
	args := make([]any, 1, 1+6*len(rows))
	args[0] = ws
	for i, r := range rows {
		if i > 0 {
			sql.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&sql, "($1, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6)
		args = append(args, r...)
	}
	sql.WriteString(" on conflict do nothing returning id")
	return sql.String(), args
}

// enqueue queues a delivery job per id in tx and, on b, the statement that
// records each job on its delivery.
func (st Store) enqueue(ctx context.Context, tx pgx.Tx, b *pgx.Batch, shard *tenant.Shard, ws uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	jobIDs, err := st.Jobs.Deliver(ctx, tx, shard, ws, ids)
	if err != nil {
		return err
	}
	if len(jobIDs) != len(ids) {
		return fmt.Errorf("webhook: %d delivery jobs queued for %d deliveries", len(jobIDs), len(ids))
	}
	jobs := make(map[string]int64, len(ids))
	for i, id := range ids {
		jobs[id.String()] = jobIDs[i]
	}
	b.Queue(setJobIDsSQL, ws, ids, jobs)
	return nil
}

// setJobIDsSQL records each delivery's job in one statement that reads no other
// relation (Citus cannot keep an UPDATE ... FROM on one shard once its plan goes
// generic): rows are matched by = any($2) and find their job in the jsonb map
// $3, keyed by delivery id.
const setJobIDsSQL = `update webhook_deliveries d set job_id = ($3::jsonb ->> d.id::text)::bigint
	where d.workspace_id = $1 and d.id = any($2)`

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
