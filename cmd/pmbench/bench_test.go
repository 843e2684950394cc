package main

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/pgcluster"
)

// TestQuickRunProducesEveryFigure runs the whole bench for one second per
// scenario, so the tool keeps working; it asserts that every scenario produced
// numbers, never how fast they are. Where the Citus extension is installed the
// same run has the -citus phase (4 shards a table, fsync off, to stay quick),
// checked by the citus subtest; elsewhere that subtest skips and says why.
func TestQuickRunProducesEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL work and two pmapi processes")
	}
	citusErr := pgcluster.CitusAvailable()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	o := options{Quick: true, Duration: time.Second, Concurrency: 8, Tasks: 300, Risks: 20, OutDir: dir,
		Citus: citusErr == nil, CitusShards: 4, citusNotDurable: true}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	t0 := time.Now()
	rep, path, err := run(ctx, o)
	if rep != nil && rep.Citus != nil {
		t.Logf("run took %s, the citus phase %.1f s", time.Since(t0).Round(time.Millisecond), rep.Citus.Seconds)
	} else {
		t.Logf("run took %s", time.Since(t0).Round(time.Millisecond))
	}
	if err != nil && !errors.Is(err, errCitusPhase) {
		t.Fatal(err)
	}
	citusRunErr := err

	t.Run("single node", func(t *testing.T) {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("no JSON result: %v", err)
		}
		want := []string{"read-detail", "read-list", "poll unchanged read-detail", "poll unchanged read-list",
			"read-list filtered", "search", "latency search", "write",
			"latency read-detail", "latency write", "deliver", "latency deliver"}
		noReference := map[string]bool{"read-list filtered": true, "search": true,
			"poll unchanged read-detail": true, "poll unchanged read-list": true}
		for _, s := range checkScenarios(t, "", rep.Scenarios, want) {
			if s.Mode == "closed-loop" && !noReference[s.Name] && (s.RefValue <= 0 || s.Ratio <= 0) {
				t.Errorf("%s: no reference: %+v", s.Name, s)
			}
			if s.Name == "deliver" && (s.Deliveries == 0 || s.RawClientPerS <= 0 || s.TpcbTPS <= 0 || s.CommitToRcptP99 == 0) {
				t.Errorf("deliver: no delivery figures: %+v", s)
			}
			if s.Name == "latency deliver" && s.Deliveries == 0 {
				t.Errorf("latency deliver: nothing delivered: %+v", s)
			}
			if s.Name == "write" || s.Name == "deliver" {
				checkServerStats(t, s)
			}
		}
		if rep.API.PeakRSSMiB <= 0 || rep.Worker.PeakRSSMiB <= 0 {
			t.Errorf("no peak RSS: %+v %+v", rep.API, rep.Worker)
		}
	})

	t.Run("citus", func(t *testing.T) {
		if citusErr != nil {
			t.Skipf("the -citus phase needs the Citus extension: %v", citusErr)
		}
		if citusRunErr != nil {
			t.Fatal(citusRunErr)
		}
		ph := rep.Citus
		if ph == nil {
			t.Fatal("no citus phase in the report")
		}
		if len(ph.Nodes) != 3 || ph.ShardCount != 4 || ph.Version == "" || !ph.MultiShardGuard ||
			ph.TenantSetting != "set_local" {
			t.Errorf("citus phase: %+v", ph)
		}
		want := []string{"read-detail", "write", "latency read-detail", "latency write",
			"read-detail" + splitSuffix, "write" + splitSuffix}
		if !ph.Routing {
			t.Errorf("citus phase without routing: %+v", ph)
		}
		// No CPU figure is asserted: /proc counts in 10 ms ticks, and on a
		// loaded machine a one-second phase can hold a handful of requests.
		for _, s := range checkScenarios(t, "citus ", ph.Scenarios, want) {
			if len(s.PostgresNodesCPUPer1k) != 3 {
				t.Errorf("citus %s: CPU of %d nodes, want 3", s.Name, len(s.PostgresNodesCPUPer1k))
			}
			// Every statement of the server role reaches one shard: the
			// guard turns any other into an error, a 500 or a failed job.
			if s.Errors != 0 || s.Non2xx != 0 {
				t.Errorf("citus %s: %d errors, %d non-2xx answers; first: %s", s.Name, s.Errors, s.Non2xx, s.FirstError)
			}
			if s.MultiShardErrors == nil || *s.MultiShardErrors != 0 {
				t.Errorf("citus %s: multi-shard statements: %v", s.Name, s.MultiShardErrors)
			}
		}
		if ph.MultiShardErrors != 0 {
			t.Errorf("citus: %d multi-shard errors over the phase", ph.MultiShardErrors)
		}
		if len(ph.Comparison) != len(want) {
			t.Fatalf("%d comparisons, want %d: %+v", len(ph.Comparison), len(want), ph.Comparison)
		}
		for _, c := range ph.Comparison {
			if c.RPSRatio <= 0 || c.P50Ratio <= 0 || c.P99Ratio <= 0 || len(c.NodesPostgresCPURatio) != 3 {
				t.Errorf("comparison %s: %+v", c.Scenario, c)
			}
		}
	})
}

// checkServerStats: a writing phase reports the WAL and checkpoint counters
// and the outbox's table, so a cost that grows over a phase can be traced to
// its cause. The values are not checked: backends report their counters at
// most once a second, and a phase here lasts one.
func checkServerStats(t *testing.T, s Scenario) {
	t.Helper()
	if s.Server == nil {
		t.Errorf("%s: no server statistics", s.Name)
		return
	}
	for _, k := range []string{"wal_bytes", "wal_fpi"} {
		if _, ok := s.Server.WAL[k]; !ok {
			t.Errorf("%s: no %s in %v", s.Name, k, s.Server.WAL)
		}
	}
	if _, ok := s.Server.Bgwriter["checkpoints_timed"]; !ok {
		t.Errorf("%s: no checkpoints in %v", s.Name, s.Server.Bgwriter)
	}
	for _, tb := range s.Server.Tables {
		if tb.Table == "public.events" {
			return
		}
	}
	t.Errorf("%s: the outbox missing from %+v", s.Name, s.Server.Tables)
}

// checkScenarios fails the test unless a phase's scenarios are want, in
// order, each with its throughput and latency figures, and answers them for
// the phase's own checks; phase starts the messages ("citus ").
func checkScenarios(t *testing.T, phase string, got []Scenario, want []string) []Scenario {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d %sscenarios, want %v", len(got), phase, want)
	}
	for i, s := range got {
		if s.Name != want[i] {
			t.Errorf("%sscenario %d is %q, want %q", phase, i, s.Name, want[i])
		}
		if s.Requests == 0 || s.RPS <= 0 || s.P50ms <= 0 || s.P99ms <= 0 {
			t.Errorf("%s%s: no figures: %+v", phase, s.Name, s)
		}
	}
	return got
}
