// Package replicas keeps the list of running `pmapi serve` processes in
// PostgreSQL, so that each can take its share of a budget they all enforce
// together: every key's rate limit (docs/decisions/usage-and-rate-budget.md).
//
// Each replica upserts its own row of serve_replicas on a heartbeat and, in
// the same round trip, counts the rows seen within the expiry. A replica that
// stops gracefully deletes its row, so the others take its share at their
// next beat; one that dies stops beating, and its row stops counting once it
// is older than the expiry. Nothing is written per request.
package replicas

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/pmapi/pmapi/internal/tick"
)

// DefaultHeartbeat is how often a replica says it is alive when not told.
const DefaultHeartbeat = 2 * time.Second

// expiryBeats is how many heartbeats a replica may miss before the others
// count it gone: more than one, so a beat delayed by a busy machine or a
// slow database does not make the budget flap.
const expiryBeats = 4

// forgetAfter is when a dead replica's row is deleted; until then it is only
// not counted, which leaves a trace an operator can read.
const forgetAfter = time.Hour

// liveReplicas is the share every key's rate limit is divided by here.
var liveReplicas = promauto.NewGauge(prometheus.GaugeOpts{
	Name: "pmapi_rate_budget_replicas",
	Help: "Live pmapi serve replicas this process counted at its last heartbeat; each enforces that share " +
		"of every key's rate limit.",
})

// Membership is this process's place among the replicas.
type Membership struct {
	pool  *pgxpool.Pool
	id    uuid.UUID
	host  string
	every time.Duration
	log   *slog.Logger
	// count is the live replicas at the last successful beat, this one
	// included; 1 until the first.
	count atomic.Int32
}

// New makes the membership of one replica over pool (the directory's, on the
// coordinator); heartbeat 0 means DefaultHeartbeat.
func New(pool *pgxpool.Pool, heartbeat time.Duration, log *slog.Logger) *Membership {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	m := &Membership{pool: pool, id: uuid.New(), host: host, every: heartbeat, log: log}
	m.count.Store(1)
	return m
}

// Count is how many replicas share the budget, at least 1. When the database
// cannot be reached it stays what it was at the last beat that succeeded.
func (m *Membership) Count() int { return int(m.count.Load()) }

// Expiry is how long a replica that stopped beating still counts.
func (m *Membership) Expiry() time.Duration { return expiryBeats * m.every }

// Beat records this replica as alive and counts the live ones.
func (m *Membership) Beat(ctx context.Context) error {
	b := &pgx.Batch{}
	b.Queue(`insert into serve_replicas (id, host) values ($1, $2)
		on conflict (id) do update set seen_at = now()`, m.id, m.host)
	var n int32
	b.Queue(`select count(*) from serve_replicas where seen_at > now() - $1::interval`,
		m.Expiry()).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	b.Queue(`delete from serve_replicas where seen_at < now() - $1::interval`, forgetAfter)
	if err := m.pool.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	m.count.Store(max(n, 1))
	liveReplicas.Set(float64(max(n, 1)))
	return nil
}

// Run beats every heartbeat until ctx ends, then leaves: the others take
// this replica's share at their next beat rather than after the expiry.
func (m *Membership) Run(ctx context.Context) {
	tick.Every(ctx, m.every, func() {
		beat, cancel := context.WithTimeout(ctx, m.every)
		defer cancel()
		if err := m.Beat(beat); err != nil && ctx.Err() == nil {
			m.log.Warn("replica heartbeat failed; keeping the last count of replicas",
				"replicas", m.Count(), "cause", err.Error())
		}
	})
	leave, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if _, err := m.pool.Exec(leave, `delete from serve_replicas where id = $1`, m.id); err != nil {
		m.log.Warn("leaving the replicas failed; the others count this one until it expires", "cause", err.Error())
	}
}
