package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

// Jobs queues and cancels a subscription's retry job inside the caller's
// transaction. probe says the job will find the circuit open: it sends one
// delivery to probe the endpoint (the open-circuit gauge counts such jobs).
type Jobs interface {
	Retry(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, sub uuid.UUID, at time.Time, probe bool) (int64, error)
	Cancel(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, jobIDs []int64) error
}

// Store reads and writes subscriptions and deliveries.
type Store struct {
	Events event.Emitter
	Jobs   Jobs
	Box    *seal.Box
	// Breaker is the circuit breaker's configuration (DefaultBreaker when
	// Failures is zero).
	Breaker Breaker
}

// CircuitBreaker is the breaker's configuration in effect.
func (st Store) CircuitBreaker() Breaker {
	if st.Breaker.Failures <= 0 {
		return DefaultBreaker
	}
	return st.Breaker
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
	Health             Health
	MaxPerSecond       *int
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DisabledAt         *time.Time
	// ProjectIDs keeps the subscription to events of these projects; nil for
	// every project (projectfilter.go).
	ProjectIDs []uuid.UUID
	// RetryJobID and RetryAt name the River job that sends the waiting
	// deliveries, and when (retry.go).
	RetryJobID       *int64
	RetryAt          *time.Time
	secret, previous []byte
	// workspace binds the sealed secrets to their row (secretAt).
	workspace uuid.UUID
}

// Inline says a fresh delivery to the subscription is sent by the fan-out
// itself: its circuit is closed and no rate cap makes it wait its turn.
func (s Subscription) Inline() bool { return s.Health.Closed() && s.MaxPerSecond == nil }

// ToView converts a subscription (never its secrets).
func ToView(s Subscription) SubscriptionView {
	circuit := s.Health.Circuit
	if circuit == "" {
		circuit = CircuitClosed
	}
	return SubscriptionView{
		ID:                 pmapi.FormatID(SubscriptionPrefix, s.ID),
		ClientID:           s.ClientID,
		URL:                s.URL,
		Events:             s.Events,
		Status:             s.Status,
		SecretPrefix:       s.SecretPrefix,
		PreviousValidUntil: s.PreviousValidUntil,
		DisabledReason:     s.DisabledReason,
		Circuit:            circuit,
		CircuitOpenedAt:    s.Health.OpenedAt,
		MaxPerSecond:       s.MaxPerSecond,
		ProjectIDs:         projectsView(s.ProjectIDs),
		CreatedAt:          s.CreatedAt,
		UpdatedAt:          s.UpdatedAt,
		DisabledAt:         s.DisabledAt,
	}
}

const subColumns = `s.id, s.client_id, s.url, s.events, s.status, s.secret_prefix, s.previous_valid_until,
	s.disabled_reason, s.failing_since, s.circuit, s.consecutive_failures, s.circuit_opened_at, s.probe_at,
	s.max_per_second, s.retry_job_id, s.retry_at, s.created_at, s.updated_at, s.disabled_at, s.secret_sealed,
	s.previous_secret_sealed, s.workspace_id, s.project_ids`

func scanSub(row pgx.Row) (Subscription, error) {
	var s Subscription
	h := &s.Health
	err := row.Scan(
		&s.ID,
		&s.ClientID,
		&s.URL,
		&s.Events,
		&s.Status,
		&s.SecretPrefix,
		&s.PreviousValidUntil,
		&s.DisabledReason,
		&h.FailingSince,
		&h.Circuit,
		&h.Failures,
		&h.OpenedAt,
		&h.ProbeAt,
		&s.MaxPerSecond,
		&s.RetryJobID,
		&s.RetryAt,
		&s.CreatedAt,
		&s.UpdatedAt,
		&s.DisabledAt,
		&s.secret,
		&s.previous,
		&s.workspace,
		&s.ProjectIDs,
	)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, pmapi.NotFound("subscription")
	}
	return s, err
}

// Secrets opens the secrets that sign a delivery now: the current one and,
// during a rotation's grace, the previous one.
func (st Store) Secrets(s Subscription, now time.Time) ([]string, error) {
	cur, err := st.Box.Open(s.secret, secretAt(s.workspace, s.ID, colSecret))
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if s.previous != nil && s.PreviousValidUntil != nil && now.Before(*s.PreviousValidUntil) {
		prev, err := st.Box.Open(s.previous, secretAt(s.workspace, s.ID, colPrevious))
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// NewSecret makes a whsec_ secret: 32 random bytes in standard base64, the shape
// the Standard Webhooks scheme loads; the Stripe-style scheme keys its HMAC with
// the whole string, so it accepts any shape.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Create subscribes url for the app's events, at most perSecond deliveries a
// second when set, within the workspace's webhooks quota; the secret is
// returned once.
func (st Store) Create(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID, url string,
	events []string,
	perSecond *int,
	projects []uuid.UUID,
) (Subscription, string, error) {
	secret, id := NewSecret(), pmapi.NewID()
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		ok, err := authz.AppExists(ctx, tx, ws, clientID)
		if err != nil {
			return err
		}
		if !ok {
			return pmapi.NotFound("app")
		}
		if err := holdQuota(ctx, tx, ws); err != nil {
			return err
		}
		if err := checkProjects(ctx, tx, ws, projects); err != nil {
			return err
		}
		s, err = scanSub(
			tx.QueryRow(
				ctx,
				`insert into webhook_subscriptions as s
				(workspace_id, id, client_id, url, events, secret_sealed, secret_prefix, max_per_second, project_ids)
				values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning `+subColumns,
				ws,
				id,
				clientID,
				url,
				events,
				st.Box.Seal(secret, secretAt(ws, id, colSecret)),
				secret[:12],
				perSecond,
				projects,
			),
		)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.WebhookCreated, subTarget(id))
	})
	return s, secret, err
}

// holdQuota keeps the workspace's active subscriptions within its webhooks
// quota: a disabled one delivers nothing and leaves room.
func holdQuota(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
	return quota.Hold(ctx, tx, ws, quota.Webhooks, func() (n int64, err error) {
		err = tx.QueryRow(ctx, `select count(*) from webhook_subscriptions
			where workspace_id = $1 and status = 'ACTIVE'`, ws).Scan(&n)
		return n, err
	})
}

// CountActive is the workspace's active subscriptions, the webhooks quota's use.
func CountActive(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (int64, error) {
	var n int64
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select count(*) from webhook_subscriptions where workspace_id = $1 and status = 'ACTIVE'`, ws).
			QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	})
	return n, err
}

// subTarget names a subscription in the audit log as the API shows its id.
func subTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: "webhook", ID: pmapi.FormatID(SubscriptionPrefix, id)}
}

// List returns an app's subscriptions, oldest first.
func (st Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string) ([]Subscription, error) {
	var out []Subscription
	err := authz.ReadUnderApp(ctx, shard, ws, clientID, func(b *pgx.Batch) {
		storekit.QueueRows(b, &out, scanSub, "select "+subColumns+
			" from webhook_subscriptions s where s.workspace_id = $1 and s.client_id = $2 order by s.id", ws, clientID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns one subscription of the app.
func (st Store) Get(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
) (Subscription, error) {
	return storekit.Get(ctx, shard, ws, scanSub, "select "+subColumns+" from webhook_subscriptions s "+
		"where s.workspace_id = $1 and s.client_id = $2 and s.id = $3", ws, clientID, id)
}

// SetStatus enables or disables a subscription. Disabling stops delivery at once:
// its waiting deliveries are CANCELLED and its retry job cancelled in the same
// transaction; the row is kept. Either way the circuit starts CLOSED again.
func (st Store) SetStatus(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	status, reason string,
) (Subscription, error) {
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		cur, err := lockSub(ctx, tx, ws, &clientID, id)
		if err != nil || cur.Status == status {
			s = cur
			return err
		}
		action := audit.WebhookDisabled
		if reason == "deleted" {
			action = audit.WebhookDeleted
		}
		if status == "ACTIVE" {
			action = audit.WebhookEnabled
			if err := holdQuota(ctx, tx, ws); err != nil {
				return err
			}
		}
		if s, err = st.setStatusTx(ctx, tx, shard, ws, cur, status, reason, 0); err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, action, subTarget(id))
	})
	return s, err
}

// lockSub reads a subscription (of the app, when clientID is set) and locks
// its row: whatever changes a subscription and its deliveries takes this lock
// first, so such writers never wait on each other in a cycle.
func lockSub(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID *string, id uuid.UUID) (Subscription, error) {
	return scanSub(
		tx.QueryRow(ctx, `select `+subColumns+` from webhook_subscriptions s where s.workspace_id = $1 and s.id = $2
		and ($3::text is null or s.client_id = $3) for update`, ws, id, clientID),
	)
}

// setStatusTx moves the locked subscription cur to status. running is the retry
// job that calls it (0 for none): it is finishing, and cancelling it would
// cancel its own context mid-transaction.
func (st Store) setStatusTx(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws uuid.UUID,
	cur Subscription,
	status, reason string,
	running int64,
) (Subscription, error) {
	if cur.Status == status {
		return cur, nil
	}
	id := cur.ID
	var why *string
	if status == "DISABLED" {
		why = &reason
		// job_id names the delivery job of a version that queued one per
		// delivery; such rows may still wait.
		rows, err := tx.Query(
			ctx,
			`update webhook_deliveries set status = 'CANCELLED', completed_at = now(), next_attempt_at = null
			where workspace_id = $1 and subscription_id = $2 and status in ('PENDING', 'RETRYING') returning job_id`,
			ws,
			id,
		)
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
		if cur.RetryJobID != nil && *cur.RetryJobID != running {
			ids = append(ids, *cur.RetryJobID)
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
	s, err := scanSub(
		tx.QueryRow(ctx, `update webhook_subscriptions s set status = $3, disabled_reason = $4, failing_since = null,
		circuit = 'CLOSED', consecutive_failures = 0, circuit_opened_at = null, probe_at = null,
		retry_job_id = null, retry_at = null,
		disabled_at = `+disabledAt+`, updated_at = now()
		where s.workspace_id = $1 and s.id = $2 returning `+subColumns, ws, id, status, why),
	)
	if err != nil {
		return s, err
	}
	if cur.Health.Circuit != CircuitClosed && cur.Health.Circuit != "" {
		circuitMoved(CircuitClosed)
	}
	typ := "webhook.enabled"
	if status == "DISABLED" {
		typ = "webhook.disabled"
	}
	return s, st.Events.Emit(
		ctx,
		tx,
		shard,
		ws,
		event.Event{Type: typ, Data: DisabledEvent{SubscriptionID: pmapi.FormatID(SubscriptionPrefix, id), Reason: reason}},
	)
}

// Rotate gives the subscription a new secret; the old one keeps signing
// alongside until grace has passed.
func (st Store) Rotate(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	grace time.Duration,
) (Subscription, string, error) {
	secret := NewSecret()
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		// Go picks whether the old secret lives on: Citus refuses now() in
		// CASE of an UPDATE.
		previous := "previous_secret_sealed = null, previous_valid_until = null"
		args := []any{ws, id, st.Box.Seal(secret, secretAt(ws, id, colSecret)), secret[:12], clientID}
		if grace > 0 {
			// The old secret moves to the other column, so it is sealed anew
			// for it: a sealed value is bound to its column.
			var cur []byte
			err := tx.QueryRow(ctx, `select secret_sealed from webhook_subscriptions
				where workspace_id = $1 and id = $2 and client_id = $3 for update`, ws, id, clientID).
				Scan(&cur)
			if errors.Is(err, pgx.ErrNoRows) {
				return pmapi.NotFound("subscription")
			}
			if err != nil {
				return err
			}
			old, err := st.Box.Open(cur, secretAt(ws, id, colSecret))
			if err != nil {
				return err
			}
			previous = "previous_secret_sealed = $6, previous_valid_until = now() + make_interval(secs => $7)"
			args = append(args, st.Box.Seal(old, secretAt(ws, id, colPrevious)), grace.Seconds())
		}
		var err error
		s, err = scanSub(tx.QueryRow(ctx, `update webhook_subscriptions s set `+previous+`,
			secret_sealed = $3, secret_prefix = $4, updated_at = now()
			where s.workspace_id = $1 and s.client_id = $5 and s.id = $2 returning `+subColumns, args...))
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.WebhookRotated, subTarget(id))
	})
	return s, secret, err
}

// AppInUse reports whether the app has an active subscription, which keeps it
// from being deleted (authz.DeleteApp asks, inside its transaction).
func AppInUse(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (bool, error) {
	var active bool
	err := tx.QueryRow(ctx, `select exists(select 1 from webhook_subscriptions
		where workspace_id = $1 and client_id = $2 and status = 'ACTIVE')`, ws, clientID).
		Scan(&active)
	return active, err
}
