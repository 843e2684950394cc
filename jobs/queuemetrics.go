package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// QueueGauges samples every shard's delivery queue at scrape time. Every serve
// and work process exports it and all of them read the same tables, so the
// series carry a shard label and dashboards and alerts take max by shard
// across pods, never a sum (docs/operations.md, "Webhook queue metrics"). A
// shard whose sample fails exports no depth or age, which would otherwise read
// as an empty queue; its queue_up reads 0 and its error counter grows.
type QueueGauges struct{ Directory *tenant.Directory }

var (
	queueDepthDesc = prometheus.NewDesc("pmapi_webhook_queue_depth",
		"Delivery jobs waiting or running on a shard (the same for every pod: take max by shard).", []string{"shard"}, nil)
	queueLagDesc = prometheus.NewDesc("pmapi_webhook_oldest_pending_age_seconds",
		"Age of a shard's oldest waiting delivery job (the same for every pod: take max by shard).", []string{"shard"}, nil)
	circuitsOpenDesc = prometheus.NewDesc(
		"pmapi_webhook_circuits_open",
		"Subscriptions on a shard whose circuit breaker is open or half-open (the same for every pod: take max by shard).",
		[]string{"shard"},
		nil,
	)
	queueUpDesc = prometheus.NewDesc(
		"pmapi_webhook_queue_up",
		"1 when this scrape read the shard's delivery queue, 0 when the query failed (depth and age are then absent).",
		[]string{"shard"},
		nil,
	)
	// Collected through QueueGauges, not registered on its own, so that a
	// registry holding the gauges holds their error count too.
	queueScrapeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_webhook_queue_scrape_errors_total",
		Help: "Scrapes whose read of a shard's delivery queue failed.",
	}, []string{"shard"})
)

// Describe implements prometheus.Collector.
func (q QueueGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- queueLagDesc
	ch <- circuitsOpenDesc
	ch <- queueUpDesc
	queueScrapeErrors.Describe(ch)
}

// Collect reads every shard's queue within the scrape's 2 s budget.
func (q QueueGauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, sh := range q.Directory.Shards().All() {
		failures := queueScrapeErrors.WithLabelValues(sh.Name)
		depth, oldest, open, err := queueStats(ctx, sh)
		if err != nil {
			failures.Inc()
			ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 0, sh.Name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 1, sh.Name)
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(depth), sh.Name)
		ch <- prometheus.MustNewConstMetric(queueLagDesc, prometheus.GaugeValue, oldest.Seconds(), sh.Name)
		ch <- prometheus.MustNewConstMetric(circuitsOpenDesc, prometheus.GaugeValue, float64(open), sh.Name)
	}
	queueScrapeErrors.Collect(ch)
}

// queueStats reads a shard's webhook queue from River's table, which is not
// a tenant table (no row-level security, on the coordinator under Citus), so
// one statement sees every workspace: the jobs that will deliver something
// (fan-outs, retry jobs, and one-delivery jobs an earlier version queued),
// the age of the oldest that is due, and the subscriptions whose live retry
// job probes an open circuit, which are the open circuits (scheduleRetry
// replaces a subscription's job when its circuit opens, and cancels the one
// it replaces).
//
// On a routed Citus shard every node's River tables hold jobs, so the figures
// add up over the coordinator and the worker nodes (a subscription's live
// retry job is on one node at a time).
func queueStats(ctx context.Context, shard *tenant.Shard) (depth int64, oldest time.Duration, open int64, err error) {
	pools := []*pgxpool.Pool{shard.Pool}
	for _, n := range shard.Nodes() {
		if n.Group != 0 {
			pools = append(pools, n.Pool)
		}
	}
	var first *time.Time
	for _, pool := range pools {
		var d, o int64
		var at *time.Time
		err = pool.QueryRow(ctx, `select count(*), min(scheduled_at),
			count(distinct args->>'subscriptionId') filter (where kind = 'webhook.retry' and args @> '{"probe": true}')
		from `+migrations.RiverSchema+`.river_job
		where kind in ('event.fanout', 'webhook.retry', 'webhook.deliver')
			and state in ('available', 'scheduled', 'retryable', 'running')`).Scan(&d, &at, &o)
		if err != nil {
			return 0, 0, 0, err
		}
		depth, open = depth+d, open+o
		if at != nil && (first == nil || at.Before(*first)) {
			first = at
		}
	}
	if first != nil && time.Since(*first) > 0 {
		oldest = time.Since(*first)
	}
	return depth, oldest, open, nil
}
