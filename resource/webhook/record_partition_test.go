package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestMoveReadsOnlyItsDeliveriesPartitions: recording an attempt, the retry
// job's hot path, finds its delivery by id in the one partition of its
// event's day, not in every day of the retention, also from the generic plan
// a prepared statement settles on (run-time pruning by the time bounds). And
// an attempt that does not know its delivery's time still finds it.
func TestMoveReadsOnlyItsDeliveriesPartitions(t *testing.T) {
	testdb.SkipOnCitus(t, "the plan is the worker's PostgreSQL plan, checked on PostgreSQL")
	ctx := context.Background()
	ws, sub, id := uuid.New(), uuid.New(), uuid.New()
	at := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	attempt := Attempt{Delivery: id, OccurredAt: at, Number: 1, At: time.Now(), Result: Result{Status: 200},
		Verdict: Verdict{Status: StatusSucceeded}}
	scanned := regexp.MustCompile(`(?m)Scan( using \S+)? on webhook_deliveries_p\S+`)
	err := testdb.InWorkspace(t, testdb.AppPool(t), ws.String(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into webhook_subscriptions (workspace_id, id, client_id, url, events,
			secret_sealed, secret_prefix) values ($1, $2, 'app', 'https://example.com/h', '{*}', '\x00', 'whsec_')`,
			ws, sub); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `insert into webhook_deliveries (workspace_id, id, subscription_id, client_id,
			event_type, data, occurred_at) values ($1, $2, $3, 'app', 'task.created', '{}', $4)`,
			ws, id, sub, at); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "set local plan_cache_mode = force_generic_plan"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "prepare move (uuid, uuid[], jsonb, timestamptz, timestamptz) as "+
			moveDeliveriesSQL); err != nil {
			return err
		}
		defer tx.Exec(ctx, "deallocate move")
		// How many partitions the move of a reads, from the generic plan.
		// EXPLAIN takes no parameters: the values go in as literals, the plan
		// still has parameters.
		partitions := func(a Attempt) (int, string, error) {
			b := &pgx.Batch{}
			queueMoves(b, ws, []Attempt{a})
			args := b.QueuedQueries[0].Arguments
			moves, err := json.Marshal(args[2])
			if err != nil {
				return 0, "", err
			}
			rows, err := tx.Query(ctx, fmt.Sprintf(
				"explain (analyze, costs off, timing off) execute move('%s', '{%s}', '%s', %s, %s)",
				ws, a.Delivery, strings.ReplaceAll(string(moves), "'", "''"),
				literal(args[3].(pgtype.Timestamptz)), literal(args[4].(pgtype.Timestamptz))))
			if err != nil {
				return 0, "", err
			}
			plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
			text := strings.Join(plan, "\n")
			return len(scanned.FindAllString(text, -1)), text, err
		}
		n, plan, err := partitions(attempt)
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("the move scanned %d partitions, want 1:\n%s", n, plan)
		}
		blind := attempt
		blind.OccurredAt = time.Time{}
		if n, plan, err = partitions(blind); err != nil {
			return err
		}
		if n < 2 {
			t.Errorf("without its delivery's time the move scanned %d partitions, want every one:\n%s", n, plan)
		}
		var moved int
		b := &pgx.Batch{}
		queueMoves(b, ws, []Attempt{blind})
		q := b.QueuedQueries[0]
		tag, err := tx.Exec(ctx, q.SQL, q.Arguments...)
		if err != nil {
			return err
		}
		if moved = int(tag.RowsAffected()); moved != 1 {
			t.Errorf("an attempt without its delivery's time moved %d deliveries, want 1", moved)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// literal is a timestamptz parameter as SQL text, infinities included.
func literal(ts pgtype.Timestamptz) string {
	switch ts.InfinityModifier {
	case pgtype.Infinity:
		return "'infinity'"
	case pgtype.NegativeInfinity:
		return "'-infinity'"
	}
	return "'" + ts.Time.Format(time.RFC3339Nano) + "'"
}
