package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pmapi/pmapi/tenant"
)

// Attempt is one delivery attempt to record: which attempt of the delivery it
// was, when it started, what the endpoint answered and what that makes of the
// delivery.
type Attempt struct {
	Delivery uuid.UUID
	// OccurredAt is the delivery's event time, its partition key: it keeps
	// the update that records the attempt to the delivery's partition (zero
	// looks in every partition).
	OccurredAt time.Time
	Number     int
	At         time.Time
	Result     Result
	Verdict    Verdict
}

func (a Attempt) outcome() string {
	switch {
	case a.Result.OK():
		return "succeeded"
	case a.Result.Blocked:
		return "blocked"
	}
	return "failed"
}

// completedAt is when a delivery that the attempt finished was finished.
func (a Attempt) completedAt() *time.Time {
	if a.Verdict.Status == StatusSucceeded || a.Verdict.Status == StatusDead {
		return &a.At
	}
	return nil
}

// rowsPerInsert bounds one multi-row INSERT (at most 14 parameters a row)
// well under PostgreSQL's 65,535 parameters.
const rowsPerInsert = 1000

// statements caches the multi-row statements by their row count.
var statements sync.Map

// valuesSQL is head (an INSERT up to its VALUES) followed by n rows of cols
// parameters each, numbered from $2 ($1 is the workspace, which every row
// starts with).
func valuesSQL(head string, cols, n int) string {
	key := fmt.Sprintf("%s|%d|%d", head, cols, n)
	if sql, ok := statements.Load(key); ok {
		return sql.(string)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(" ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("($1")
		for c := range cols {
			fmt.Fprintf(&b, ", $%d", 2+i*cols+c)
		}
		b.WriteString(")")
	}
	sql, _ := statements.LoadOrStore(key, b.String())
	return sql.(string)
}

// newDelivery is a delivery a fan-out run writes, with the attempt it made
// (nil when it was not sent).
type newDelivery struct {
	Delivery
	first *Attempt
}

// queueNewDeliveries inserts deliveries with their state as their first run
// left it, a sent one's attempt in its attempt log: one row and one statement
// a delivery. A fan-out run again after its first run committed finds its
// events gone and writes nothing; one that ran at the same time (a rescued job
// whose first run was only slow) collides on the deliveries' keys, which fails
// its whole write: nothing is recorded twice.
func queueNewDeliveries(b *pgx.Batch, ws uuid.UUID, ds []newDelivery) {
	queueInserts(
		b,
		ws,
		`insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id, occurred_at, event_type,
			data, status, attempts, last_status, next_attempt_at, completed_at, attempt_log) values`,
		13,
		ds,
		func(d newDelivery) []any {
			var log []byte
			if d.first != nil {
				log = d.first.logJSON()
			}
			return []any{d.ID, d.SubscriptionID, d.ClientID, d.EventID, d.OccurredAt, d.EventType, json.RawMessage(d.Data),
				d.Status, d.Attempts, d.LastStatus, d.NextAttemptAt, d.CompletedAt, log}
		},
	)
}

// queueInserts queues head's INSERT of rows as multi-row VALUES, at most
// rowsPerInsert rows a statement, each row the workspace and the cols values
// of columns(row): Citus ships INSERT ... SELECT (unnest included) with COPY,
// which row-level security refuses.
func queueInserts[T any](b *pgx.Batch, ws uuid.UUID, head string, cols int, rows []T, columns func(T) []any) {
	for start := 0; start < len(rows); start += rowsPerInsert {
		chunk := rows[start:min(start+rowsPerInsert, len(rows))]
		args := make([]any, 1, 1+cols*len(chunk))
		args[0] = ws
		for _, r := range chunk {
			args = append(args, columns(r)...)
		}
		b.Queue(valuesSQL(head, cols, len(chunk)), args...)
	}
}

// moveDeliveriesSQL records attempts of stored deliveries in one statement
// that reads no other relation (Citus cannot keep an UPDATE ... FROM on one
// shard once its plan goes generic): rows match by = any($2) and find what to
// write in the jsonb map $3 keyed by id, times as epoch microseconds through
// to_timestamp, which is immutable where a cast from text is not. Each
// attempt joins its delivery's attempt log ('g'), which a delivery from
// before the log has as NULL; the state moves only while the delivery waits:
// a delivery cancelled meanwhile stays cancelled, with the attempt that was
// made logged all the same. $4 and $5 bound the deliveries' event times, so
// only their partitions are read, not every day of the retention.
const moveDeliveriesSQL = `update webhook_deliveries d
	set attempt_log = coalesce(d.attempt_log, '[]'::jsonb) || ($3::jsonb -> d.id::text -> 'g'),
	status = case when d.status in ('PENDING', 'RETRYING') then $3::jsonb -> d.id::text ->> 's' else d.status end,
	attempts = case when d.status in ('PENDING', 'RETRYING')
		then ($3::jsonb -> d.id::text ->> 'a')::integer else d.attempts end,
	last_status = case when d.status in ('PENDING', 'RETRYING')
		then ($3::jsonb -> d.id::text ->> 'l')::integer else d.last_status end,
	next_attempt_at = case when d.status in ('PENDING', 'RETRYING')
		then to_timestamp(($3::jsonb -> d.id::text ->> 'n')::double precision / 1e6) else d.next_attempt_at end,
	completed_at = case when d.status in ('PENDING', 'RETRYING')
		then to_timestamp(($3::jsonb -> d.id::text ->> 'c')::double precision / 1e6) else d.completed_at end
	where d.workspace_id = $1 and d.id = any($2) and d.occurred_at between $4 and $5`

type move struct {
	Status     string   `json:"s"`
	Attempts   int      `json:"a"`
	LastStatus *int     `json:"l"`
	Next       *int64   `json:"n"`
	Completed  *int64   `json:"c"`
	Log        []logged `json:"g"`
}

func micros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// queueMoves records attempts of stored deliveries: each joins its
// delivery's attempt log and moves its state.
func queueMoves(b *pgx.Batch, ws uuid.UUID, attempts []Attempt) {
	if len(attempts) == 0 {
		return
	}
	ids := make([]uuid.UUID, len(attempts))
	moves := make(map[string]move, len(attempts))
	from, to := occurredBounds(attempts)
	for i, a := range attempts {
		ids[i] = a.Delivery
		m := move{
			Status:    a.Verdict.Status,
			Attempts:  a.Number,
			Next:      micros(a.Verdict.NextAt),
			Completed: micros(a.completedAt()),
			Log:       []logged{a.logged()},
		}
		if a.Result.Status != 0 {
			m.LastStatus = &a.Result.Status
		}
		moves[a.Delivery.String()] = m
	}
	b.Queue(moveDeliveriesSQL, ws, ids, moves, from, to)
}

// occurredBounds are the earliest and latest event times of the attempts'
// deliveries; an attempt that does not know its delivery's time widens them
// to every partition.
func occurredBounds(attempts []Attempt) (from, to pgtype.Timestamptz) {
	from = pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	to = pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	var lo, hi time.Time
	for _, a := range attempts {
		if a.OccurredAt.IsZero() {
			return from, to
		}
		if lo.IsZero() || a.OccurredAt.Before(lo) {
			lo = a.OccurredAt
		}
		if a.OccurredAt.After(hi) {
			hi = a.OccurredAt
		}
	}
	return pgtype.Timestamptz{Time: lo, Valid: true}, pgtype.Timestamptz{Time: hi, Valid: true}
}

// queueHealth stores a locked subscription's circuit.
func queueHealth(b *pgx.Batch, ws, sub uuid.UUID, h Health) {
	b.Queue(
		`update webhook_subscriptions set circuit = $3, consecutive_failures = $4, circuit_opened_at = $5, probe_at = $6,
		failing_since = $7 where workspace_id = $1 and id = $2`,
		ws,
		sub,
		h.Circuit,
		h.Failures,
		h.OpenedAt,
		h.ProbeAt,
		h.FailingSince,
	)
}

// scheduleRetry makes sure the locked subscription's waiting deliveries are
// looked at by at: a retry job already due by then is enough; otherwise a new
// one replaces it (cancelled). force replaces it anyway, so the job knows
// whether it probes an open circuit.
func (st Store) scheduleRetry(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws uuid.UUID,
	sub Subscription,
	at time.Time,
	force bool,
) error {
	if !force && sub.RetryJobID != nil && sub.RetryAt != nil && !sub.RetryAt.After(at) {
		return nil
	}
	id, err := st.Jobs.Retry(ctx, tx, shard, ws, sub.ID, at, !sub.Health.Closed())
	if err != nil {
		return err
	}
	if sub.RetryJobID != nil {
		if err := st.Jobs.Cancel(ctx, tx, shard, []int64{*sub.RetryJobID}); err != nil {
			return err
		}
	}
	_, err = tx.Exec(
		ctx,
		"update webhook_subscriptions set retry_job_id = $3, retry_at = $4 where workspace_id = $1 and id = $2",
		ws,
		sub.ID,
		id,
		at,
	)
	return err
}
