package observability

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var readyDesc = prometheus.NewDesc(
	"pmapi_ready",
	"1 when the readiness check (every shard reachable and carrying the newest migration; "+
		"what /readyz answers) passes at scrape time, else 0.",
	nil,
	nil,
)

// readiness runs the process's readiness check at scrape time, so the alert on
// it needs no kube-state-metrics and also covers `pmapi work`, which has no
// /readyz for a kubelet to probe.
type readiness struct{ check func(context.Context) error }

// RegisterReadiness exports pmapi_ready from check, replacing an earlier
// registration.
func RegisterReadiness(check func(context.Context) error) { Reregister(readiness{check}) }

func (r readiness) Describe(ch chan<- *prometheus.Desc) { ch <- readyDesc }

func (r readiness) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v := 1.0
	if r.check(ctx) != nil {
		v = 0
	}
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, v)
}
