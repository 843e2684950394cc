package webhook_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/webhook"
)

// event inserts an unfanned event of type typ.
func (f fixture) event(t *testing.T, typ string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	f.exec(t, `insert into events (workspace_id, id, type, data) values ($1, $2, $3, '{"n": 1}')`, f.ws, id, typ)
	return id
}

// fanout loads ids and the subscriptions, "sends" every inline plan with
// answer (nil: nothing is sent), and records the run.
func (f fixture) fanout(t *testing.T, answer *webhook.Result, ids ...uuid.UUID) ([]webhook.Plan, error) {
	t.Helper()
	events, subs, err := f.store.LoadFanout(f.ctx, f.shard, f.ws, ids)
	if err != nil {
		t.Fatal(err)
	}
	plans := webhook.Plans(events, subs, time.Now())
	runs := make([]webhook.Fanned, len(plans))
	for i, p := range plans {
		runs[i] = webhook.Fanned{Plan: p, Sent: make([]*webhook.Sent, len(p.Deliveries))}
		if answer == nil || !p.Sub.Inline() {
			continue
		}
		for k := range p.Deliveries {
			runs[i].Sent[k] = &webhook.Sent{At: time.Now(), Result: *answer}
			if !answer.OK() {
				break
			}
		}
	}
	var marked []uuid.UUID
	for _, e := range events {
		marked = append(marked, e.ID)
	}
	_, err = f.store.RecordFanout(f.ctx, f.shard, f.ws, marked, runs, testSchedule)
	return plans, err
}

type stored struct {
	status         string
	attempts       int
	event          *uuid.UUID
	next, occurred *time.Time
	logged         int
	sub            uuid.UUID
	replayOf       *uuid.UUID
}

// deliveries reads the workspace's deliveries, oldest first, with how many
// attempts each has in its log.
func (f fixture) deliveries(t *testing.T) []stored {
	t.Helper()
	var out []stored
	err := f.shard.Read(f.ctx, f.ws, func(b *pgx.Batch) {
		b.Queue(`select d.status, d.attempts, d.event_id, d.next_attempt_at, d.occurred_at, d.subscription_id, d.replay_of,
				coalesce(jsonb_array_length(d.attempt_log), 0)
			from webhook_deliveries d where d.workspace_id = $1 order by d.id`, f.ws).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var s stored
				if err := rows.Scan(
					&s.status, &s.attempts, &s.event, &s.next, &s.occurred, &s.sub, &s.replayOf, &s.logged,
				); err != nil {
					return err
				}
				out = append(out, s)
			}
			return rows.Err()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var ok204 = webhook.Result{Status: 204, Latency: time.Millisecond}

// TestFanoutRecordsEveryDeliveryAtOnce: more deliveries than one INSERT
// takes, each written SUCCEEDED with its attempt, its event's id and time;
// the event is marked, so a second run finds nothing; a healthy subscription
// row is not written and no retry job is queued.
func TestFanoutRecordsEveryDeliveryAtOnce(t *testing.T) {
	f := newFixture(t)
	f.subscriptions(t, 1100)
	ev := f.event(t, "test.ping")
	if _, err := f.fanout(t, &ok204, ev); err != nil {
		t.Fatal(err)
	}
	all := f.deliveries(t)
	wrong := 0
	for _, d := range all {
		if d.status != webhook.StatusSucceeded || d.attempts != 1 || d.logged != 1 || d.event == nil || *d.event != ev ||
			d.occurred == nil {
			wrong++
		}
	}
	if len(all) != 1100 || wrong != 0 {
		t.Errorf(
			"%d deliveries, %d of them not SUCCEEDED with one attempt logged and their event; want 1100 and none",
			len(all),
			wrong,
		)
	}
	if plans, err := f.fanout(t, &ok204, ev); err != nil || len(plans) != 0 {
		t.Errorf("a second fan-out of the event planned %d deliveries (%v), want none", len(plans), err)
	}
	if len(f.jobs.retries) != 0 {
		t.Errorf("retry jobs %v for deliveries that all succeeded", f.jobs.retries)
	}
}

// TestAConcurrentFanoutRecordsNothingTwice: two runs of one job that both
// sent (a rescued job whose first run was only slow) record once; the second
// one's write fails whole and leaves the first's rows as they were.
func TestAConcurrentFanoutRecordsNothingTwice(t *testing.T) {
	f := newFixture(t)
	f.subscriptions(t, 2)
	ev := f.event(t, "test.ping")
	events, subs, err := f.store.LoadFanout(f.ctx, f.shard, f.ws, []uuid.UUID{ev})
	if err != nil {
		t.Fatal(err)
	}
	run := func() error {
		var runs []webhook.Fanned
		for _, p := range webhook.Plans(events, subs, time.Now()) {
			runs = append(runs, webhook.Fanned{Plan: p, Sent: []*webhook.Sent{{At: time.Now(), Result: ok204}}})
		}
		_, err := f.store.RecordFanout(f.ctx, f.shard, f.ws, []uuid.UUID{ev}, runs, testSchedule)
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if err := run(); err == nil {
		t.Error("the second run's write succeeded")
	}
	if all := f.deliveries(t); len(all) != 2 || all[0].logged != 1 || all[1].logged != 1 {
		t.Errorf("deliveries %+v, want two with one attempt each", all)
	}
}

// TestAFailureWaitsWithWhatFollowsIt: a plan's first failure is RETRYING at
// the schedule's first step, and the later events of the same transaction
// wait for the same time, so the retry job sends them after it, in order. The
// subscription's streak starts and its retry job is queued for that time.
func TestAFailureWaitsWithWhatFollowsIt(t *testing.T) {
	f := newFixture(t)
	f.subscriptions(t, 1)
	a, b := f.event(t, "test.one"), f.event(t, "test.two")
	before := time.Now()
	if _, err := f.fanout(t, &failed, a, b); err != nil {
		t.Fatal(err)
	}
	all := f.deliveries(t)
	if len(all) != 2 || all[0].status != webhook.StatusRetrying || all[0].attempts != 1 || all[0].logged != 1 ||
		all[1].status != webhook.StatusPending || all[1].attempts != 0 || all[1].logged != 0 ||
		!same(*all[1].next, *all[0].next) {
		t.Fatalf("deliveries %+v: want the first RETRYING after one attempt and the second PENDING at the same time", all)
	}
	if due := all[0].next.Sub(before); due < time.Minute || due > time.Minute+5*time.Second {
		t.Errorf("next attempt in %v, want the schedule's first step", due)
	}
	if *all[0].event != a || *all[1].event != b {
		t.Error("deliveries are not in event order")
	}
	if len(f.jobs.retries) != 1 || !same(f.jobs.retries[0].at, *all[0].next) || f.jobs.retries[0].probe {
		t.Fatalf("retry jobs %+v, want one at the next attempt", f.jobs.retries)
	}
	s := f.subscription(t, all[0].sub)
	if s.Health.Failures != 1 || s.Health.FailingSince == nil || !s.Health.Closed() || s.RetryJobID == nil ||
		*s.RetryJobID != f.jobs.retries[0].id {
		t.Errorf("subscription %+v: want one failure, CLOSED, naming the retry job", s)
	}
	// A later failure due later leaves the earlier job in place.
	c := f.event(t, "test.three")
	if _, err := f.fanout(t, &failed, c); err != nil {
		t.Fatal(err)
	}
	if len(f.jobs.retries) != 1 || len(f.jobs.cancelled) != 0 {
		t.Errorf(
			"retry jobs %+v, cancelled %v: the first job, due sooner, covers the new delivery",
			f.jobs.retries,
			f.jobs.cancelled,
		)
	}
}

// subscription reads one subscription as the store sees it.
func (f fixture) subscription(t *testing.T, id uuid.UUID) webhook.Subscription {
	t.Helper()
	s, err := f.store.Get(f.ctx, f.shard, f.ws, "app", id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTheCircuitOpensAndDeliveriesWait: the breaker's Failures-th failure in
// a row opens the circuit and replaces the retry job with a probe at the
// cooldown's end; while it is open the fan-out sends nothing, and new
// deliveries wait, PENDING with no attempt spent.
func TestTheCircuitOpensAndDeliveriesWait(t *testing.T) {
	f := newFixture(t)
	f.store.Breaker = testBreaker
	f.subscriptions(t, 1)
	for i := 0; i < testBreaker.Failures; i++ {
		if _, err := f.fanout(t, &failed, f.event(t, "test.ping")); err != nil {
			t.Fatal(err)
		}
	}
	all := f.deliveries(t)
	s := f.subscription(t, all[0].sub)
	if s.Health.Circuit != webhook.CircuitOpen || s.Health.OpenedAt == nil || s.Health.ProbeAt == nil ||
		s.Health.ProbeAt.Sub(*s.Health.OpenedAt) != testBreaker.Cooldown {
		t.Fatalf("after %d failures: %+v, want OPEN with a probe a cooldown later", testBreaker.Failures, s.Health)
	}
	last := f.jobs.retries[len(f.jobs.retries)-1]
	if !last.probe || !same(last.at, *s.Health.ProbeAt) || s.RetryJobID == nil || *s.RetryJobID != last.id ||
		len(f.jobs.cancelled) != 1 {
		t.Errorf(
			"retry jobs %+v, cancelled %v: want the earlier job replaced by a probe at probe_at",
			f.jobs.retries,
			f.jobs.cancelled,
		)
	}
	if v := webhook.ToView(s); v.Circuit != "OPEN" || v.CircuitOpenedAt == nil {
		t.Errorf("view %+v", v)
	}
	plans, err := f.fanout(t, &ok204, f.event(t, "test.ping"))
	if err != nil || len(plans) != 1 || plans[0].Sub.Inline() {
		t.Fatalf("fan-out with the circuit open: %d plans, %v", len(plans), err)
	}
	all = f.deliveries(t)
	if d := all[len(all)-1]; d.status != webhook.StatusPending || d.attempts != 0 || d.logged != 0 {
		t.Errorf("a delivery while the circuit is open: %+v, want PENDING without an attempt", d)
	}
}

// same compares a time with its stored copy, which PostgreSQL keeps to the
// microsecond.
func same(a, b time.Time) bool { return a.Sub(b).Abs() < time.Microsecond }

// TestDeliveryIDsAreStableAndSortLikeTheirEvents: the same event and
// subscription always give the same id (a fan-out sent again after a crash
// sends the same X-Service-Delivery-Id); another subscription or event gives
// another; and deliveries of later events sort after earlier ones, as the
// retry job sends them.
func TestDeliveryIDsAreStableAndSortLikeTheirEvents(t *testing.T) {
	sub, other := uuid.New(), uuid.New()
	var prev uuid.UUID
	for i := range 1000 {
		ev := uuid.Must(uuid.NewV7())
		id := webhook.DeliveryID(ev, sub)
		if id != webhook.DeliveryID(ev, sub) || id == webhook.DeliveryID(ev, other) || id.Version() != 7 ||
			id.Variant() != uuid.RFC4122 {
			t.Fatalf("event %s: delivery id %s", ev, id)
		}
		if i > 0 && id.String() <= prev.String() {
			t.Fatalf("delivery %s of a later event sorts before %s", id, prev)
		}
		prev = id
	}
}
