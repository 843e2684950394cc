package jobs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/tenant"
)

// TestQueueGaugesReportAFailedReadAsUnknown: one shard answers, the other's
// pool is closed (its database is down). The answering shard exports its
// depth and age; the other exports no depth or age (a 0 there would read as an
// empty queue and silence the lag alert), queue_up 0 and a scrape error.
func TestQueueGaugesReportAFailedReadAsUnknown(t *testing.T) {
	down, err := pgxpool.New(context.Background(), testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	down.Close()
	mode := testdb.TenantSetting(t)
	shards, err := tenant.NewShards(
		"default",
		tenant.NewShard("default", testdb.AppPool(t), mode),
		tenant.NewShard("down", down, mode),
	)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(jobs.QueueGauges{Directory: tenant.NewDirectory(shards)})
	got := func() map[string]map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]float64{}
		for _, mf := range mfs {
			out[mf.GetName()] = map[string]float64{}
			for _, m := range mf.GetMetric() {
				out[mf.GetName()][shardOf(m)] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		return out
	}
	first := got()
	for name, want := range map[string]map[string]float64{
		"pmapi_webhook_queue_up": {"default": 1, "down": 0},
	} {
		for shard, v := range want {
			if first[name][shard] != v {
				t.Errorf("%s{shard=%q} = %v, want %v", name, shard, first[name][shard], v)
			}
		}
	}
	for _, name := range []string{"pmapi_webhook_queue_depth", "pmapi_webhook_oldest_pending_age_seconds"} {
		if _, ok := first[name]["default"]; !ok {
			t.Errorf("%s has no series for the answering shard", name)
		}
		if v, ok := first[name]["down"]; ok {
			t.Errorf("%s{shard=\"down\"} = %v; a failed read must export nothing", name, v)
		}
	}
	errs := first["pmapi_webhook_queue_scrape_errors_total"]
	second := got()["pmapi_webhook_queue_scrape_errors_total"]
	if _, ok := errs["default"]; !ok || second["down"]-errs["down"] != 1 || second["default"] != errs["default"] {
		t.Errorf(
			"scrape errors: %v then %v; want the down shard's to grow by one a scrape, the other's to stay (and exist)",
			errs,
			second,
		)
	}
}

func shardOf(m *dto.Metric) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == "shard" {
			return l.GetValue()
		}
	}
	return ""
}

// TestOpenCircuitsAreTheLiveProbeJobs: the open-circuit gauge counts the
// subscriptions whose live retry job probes an open circuit, once each
// however many such jobs one has; a retry job of a closed circuit, and a
// finished or cancelled probe, do not count. (On a queue no worker serves, so
// nothing runs them meanwhile.)
func TestOpenCircuitsAreTheLiveProbeJobs(t *testing.T) {
	ctx := context.Background()
	dir, _ := testdb.Directory(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(jobs.QueueGauges{Directory: dir})
	open := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "pmapi_webhook_circuits_open" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no pmapi_webhook_circuits_open")
		return 0
	}
	before := open()
	ws := uuid.New()
	subs := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	for _, j := range []struct {
		sub   uuid.UUID
		probe bool
		state string
	}{
		{subs[0], true, "scheduled"}, {subs[1], true, "scheduled"}, {subs[1], true, "running"},
		{subs[2], false, "available"}, {subs[3], true, "completed"}, {subs[4], true, "cancelled"},
	} {
		args, _ := json.Marshal(jobs.RetryArgs{WorkspaceID: ws, SubscriptionID: j.sub, Probe: j.probe})
		finalized := "null"
		if j.state == "completed" || j.state == "cancelled" {
			finalized = "now()"
		}
		_, err := testdb.OwnerPool(t).Exec(ctx, `insert into river.river_job
				(kind, args, queue, state, scheduled_at, max_attempts, priority, finalized_at)
			values ('webhook.retry', $1, 'gauge-test-unserved', $2, now(), 25, 1, `+finalized+`)`, args, j.state)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = testdb.OwnerPool(t).Exec(ctx, "delete from river.river_job where queue = 'gauge-test-unserved'")
	})
	if got := open() - before; got != 2 {
		t.Errorf("open circuits rose by %v, want 2 (two subscriptions with live probes)", got)
	}
}
