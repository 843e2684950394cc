package api_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/tenant"
)

// BenchmarkWebhookDelivery drains a backlog of b.N task updates' events (each
// transaction emits task.status_changed and task.updated, as a status update
// does) to one HTTPS subscription to task.updated, with workers set up as
// `pmapi work` sets them up: a pool of their own, sized as work sizes it, and
// pmapi's default worker settings. It reports deliveries/s, River jobs per
// delivery (1: each transaction's fan-out job delivers its events itself; a
// retry job appears only for a failure), the workers' pool waits and the jobs'
// run times, so a slow drain shows where its time went. On the 2-core test
// machine the drain went from 374 to about 1,400 deliveries a second when the
// fan-out job began to deliver (docs/decisions/webhooks.md).
//
// DELIVER_WORKERS, DELIVER_COOLDOWN (a duration) and DELIVER_POOL (max
// connections) override the defaults to compare settings:
//
//	bin/pmapi devdb exec -- go test -run '^$' -bench WebhookDelivery -benchtime 2000x ./api/
func BenchmarkWebhookDelivery(b *testing.B) {
	ctx := context.Background()
	rcv := apitest.NewReceiver(b)
	env := apitest.Reaching(b, rcv, true)
	// The backlog is queued before any worker runs, as a burst of writes leaves it.
	ws, shard, emitter := apitest.EmitterFor(b, env, env.NewTenant(b), rcv, "task.updated")
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
					return emitter.Emit(ctx, tx, shard, ws,
						event.Event{Type: "task.status_changed", Data: map[string]any{"n": i}},
						event.Event{Type: "task.updated", Data: map[string]any{"n": i}})
				})
				if err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()

	opts := jobs.Options{Work: true, Box: env.Box, Sender: env.Sender, Workers: envInt(b, "DELIVER_WORKERS", 0)}
	if v := os.Getenv("DELIVER_COOLDOWN"); v != "" {
		var err error
		if opts.FetchCooldown, err = time.ParseDuration(v); err != nil {
			b.Fatal(err)
		}
	}
	poolCfg, err := tenant.PoolConfig(testdb.Database(b).AppURL)
	if err != nil {
		b.Fatal(err)
	}
	poolCfg.MaxConns = jobs.PoolConns(envInt(b, "DELIVER_WORKERS", 20))
	if n := envInt(b, "DELIVER_POOL", 0); n > 0 {
		poolCfg.MaxConns = int32(n)
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	workDir, _ := testdb.DirectoryOver(b, pool)
	workers, err := jobs.NewClients(workDir, opts)
	if err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	start := time.Now()
	if err := workers.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for deadline := start.Add(5 * time.Minute); len(rcv.Requests()) < b.N; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered in 5 minutes", len(rcv.Requests()), b.N)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = workers.Stop(stopCtx)

	st := pool.Stat()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	jobsRun := testdb.RiverCount(b, "select count(*) from river.river_job where args->>'workspaceId' = $1", ws.String())
	b.ReportMetric(float64(jobsRun)/float64(b.N), "jobs/delivery")
	b.ReportMetric(float64(st.EmptyAcquireCount())/float64(max(st.AcquireCount(), 1)), "waited-acquires/acquire")
	b.Logf(
		"%d deliveries in %v: %.0f/s; pool max %d conns: %d acquires, %d had to wait, %v waiting in all (%v per acquire)",
		b.N,
		elapsed.Round(time.Millisecond),
		float64(b.N)/elapsed.Seconds(),
		st.MaxConns(),
		st.AcquireCount(),
		st.EmptyAcquireCount(),
		st.AcquireDuration().
			Round(time.Millisecond),
		(st.AcquireDuration() / time.Duration(max(st.AcquireCount(), 1))).Round(time.Microsecond),
	)
	logJobTimes(b, ws)
}

// logJobTimes prints, per job kind of the workspace, how many ran, how long
// they ran on average and the span from the first start to the last finish.
func logJobTimes(b *testing.B, ws uuid.UUID) {
	rows, err := testdb.OwnerPool(b).Query(context.Background(), `select kind, count(*),
			coalesce(avg(extract(epoch from finalized_at - attempted_at)) * 1000, 0),
			coalesce(extract(epoch from max(finalized_at) - min(attempted_at)), 0)
		from river.river_job where args->>'workspaceId' = $1 group by kind order by kind`, ws.String())
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n int
		var runMS, spanS float64
		if err := rows.Scan(&kind, &n, &runMS, &spanS); err != nil {
			b.Fatal(err)
		}
		b.Logf("%-16s %6d jobs, %7.2f ms run on average, %6.2f s from first start to last finish (%.0f jobs/s)",
			kind, n, runMS, spanS, float64(n)/max(spanS, 1e-3))
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}
