package jobs_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pmapi/pmapi/internal/testdb"
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
	shards, err := tenant.NewShards("default", tenant.NewShard("default", testdb.AppPool(t), mode), tenant.NewShard("down", down, mode))
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
		t.Errorf("scrape errors: %v then %v; want the down shard's to grow by one a scrape, the other's to stay (and exist)", errs, second)
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
