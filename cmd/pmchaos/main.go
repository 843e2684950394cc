// Command pmchaos breaks a running pmapi the way production does and counts
// what survived. It starts a private PostgreSQL (fsync on), `pmapi serve` and
// `pmapi work` as processes of their own and a loopback HTTPS receiver that
// verifies every signature with stripe-go; subscribes the receiver to every
// event; then runs concurrent creates and updates of projects, tasks, risks,
// notes and action items through the real API with an API key while it kills
// the worker (kill -9) twice, the API once, and restarts PostgreSQL in
// immediate mode, each brought back at once. Afterwards it holds every
// acknowledged write against the rows and events in the database, and every
// event against the deliveries the receiver got, within a bounded drain.
//
// With -citus the database is a Citus cluster (a coordinator and two workers,
// the multi-shard guard on) and pmapi routes the workspace to its worker; the
// workspace is moved to the other worker under the load, and the worker that
// then holds it is the one restarted.
//
//	make chaos              # 30 s of load, fails on a lost write, event or delivery, or a 5xx outside the restart
//	make chaos STRICT=1     # also fails on a 5xx but 503 with Retry-After while PostgreSQL restarts
//	make chaos CITUS=1      # the same on Citus, with the workspace moved under the load
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	Duration    time.Duration
	Concurrency int
	// Drain bounds the wait for deliveries after the load; see drainBound.
	Drain time.Duration
	// Grace extends the restart window past pg_ctl's return: the pools find
	// their dead connections on first use.
	Grace  time.Duration
	Strict bool
	// Citus runs the world on a Citus cluster (-citus).
	Citus bool
	Seed  uint64
	Pmapi string
	Log   io.Writer
}

// drainBound is the longest a delivery can legitimately take after the last
// fault, with the settings pmchaos gives the worker: a killed worker's jobs
// wait for a new River leader (its lock expires within about 15 s), for
// PMAPI_JOB_RESCUE_AFTER (10 s here, 15 s by default), for River's rescuer pass
// (every 30 s), for the delivery's next retry (at most 20 s on the schedule
// below) and the scheduler's pass (about 5 s): some 80 s, and twice that when
// the fan-out job and then its delivery are both caught by a kill.
const drainBound = 180 * time.Second

// Worker settings for the run: jobs of a killed worker are rescued after 10 s
// (the default is 15 s), and retries come within seconds, five of them spanning
// longer than any fault, so that no delivery runs out of attempts.
const (
	rescueAfter   = "10s"
	retrySchedule = "1s,2s,5s,10s,20s"
)

func main() {
	o := options{Log: os.Stderr}
	flag.DurationVar(
		&o.Duration,
		"duration",
		30*time.Second,
		"how long the load runs; the faults fall at 20, 40, 60 and 80 % of it",
	)
	flag.IntVar(&o.Concurrency, "c", 16, "concurrent API clients")
	flag.DurationVar(&o.Drain, "drain", drainBound, "longest wait for deliveries after the load")
	flag.DurationVar(&o.Grace, "grace", 5*time.Second, "how long after PostgreSQL is back the restart window lasts")
	flag.BoolVar(
		&o.Strict,
		"strict",
		false,
		"also fail on a 5xx inside the PostgreSQL restart window other than 503 SERVICE_UNAVAILABLE with Retry-After",
	)
	flag.BoolVar(&o.Citus, "citus", false,
		"run on a Citus coordinator and two workers, moving the workspace and restarting its worker")
	flag.Uint64Var(&o.Seed, "seed", 0, "seed of the load's choices (0: random)")
	flag.StringVar(&o.Pmapi, "pmapi", "", "the pmapi binary (default: build one with the release flags)")
	flag.Parse()
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, o)
	if res != nil {
		res.print(os.Stdout, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pmchaos:", err)
		os.Exit(2)
	}
	if fails := res.failures(o.Strict); len(fails) > 0 {
		fmt.Println("\nFAIL")
		for _, f := range fails {
			fmt.Println("  -", f)
		}
		os.Exit(1)
	}
	fmt.Println("\nPASS")
}

// run sets the world up, loads it while the faults fall, drains and counts.
func run(ctx context.Context, o options) (*result, error) {
	w, err := newWorld(ctx, o)
	if err != nil {
		return nil, err
	}
	defer w.close()
	l := newLoad(w, o)
	faults := make(chan []fault, 1)
	start := time.Now()
	res := &result{seed: o.Seed, start: start, grace: o.Grace}
	go func() { faults <- w.injectFaults(ctx, start, o.Duration) }()
	l.run(ctx, start, o.Duration)
	res.faults = <-faults
	res.load = l.summary()
	if err := w.healthy(ctx); err != nil {
		return res, err
	}
	res.drain, res.drained = w.drain(ctx, time.Now(), o.Drain)
	if res.counts, err = w.count(ctx, l.acks()); err != nil {
		return res, err
	}
	res.receiver = w.rcv.summary()
	return res, nil
}
