package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestQuickRunProducesEveryFigure runs the whole bench for one second per
// scenario, so the tool keeps working; it asserts that every scenario produced
// numbers, never how fast they are.
func TestQuickRunProducesEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL work and two pmapi processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	o := options{Quick: true, Duration: time.Second, Concurrency: 8, Tasks: 300, Risks: 20, OutDir: dir}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	rep, path, err := run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no JSON result: %v", err)
	}
	want := []string{"read-detail", "read-list", "write", "latency read-detail", "latency write", "deliver", "latency deliver"}
	if len(rep.Scenarios) != len(want) {
		t.Fatalf("%d scenarios, want %v", len(rep.Scenarios), want)
	}
	for i, s := range rep.Scenarios {
		if s.Name != want[i] {
			t.Errorf("scenario %d is %q, want %q", i, s.Name, want[i])
		}
		if s.Requests == 0 || s.RPS <= 0 || s.P50ms <= 0 || s.P99ms <= 0 {
			t.Errorf("%s: no figures: %+v", s.Name, s)
		}
		if s.Mode == "closed-loop" && (s.RefValue <= 0 || s.Ratio <= 0) {
			t.Errorf("%s: no reference: %+v", s.Name, s)
		}
		if s.Name == "deliver" && (s.Deliveries == 0 || s.RawClientPerS <= 0 || s.TpcbTPS <= 0 || s.CommitToRcptP99 == 0) {
			t.Errorf("deliver: no delivery figures: %+v", s)
		}
		if s.Name == "latency deliver" && s.Deliveries == 0 {
			t.Errorf("latency deliver: nothing delivered: %+v", s)
		}
	}
	if rep.API.PeakRSSMiB <= 0 || rep.Worker.PeakRSSMiB <= 0 {
		t.Errorf("no peak RSS: %+v %+v", rep.API, rep.Worker)
	}
}
