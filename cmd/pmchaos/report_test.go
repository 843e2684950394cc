package main

import (
	"strings"
	"testing"
	"time"
)

// TestVerdict: a 5xx fails the run outside the PostgreSQL restart window and,
// inside it, only with -strict and only when it is not a 503 with
// Retry-After; anything lost fails it either way.
func TestVerdict(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	clean := result{start: t0, grace: 5 * time.Second, drained: true,
		faults: []fault{{What: killWorker, At: at(6), Done: at(6)}, {What: killAPI, At: at(12), Done: at(12.5)},
			{What: restartPostgres, At: at(18), Done: at(20)}, {What: killWorker, At: at(24), Done: at(24)}},
		counts: counts{
			Acked:        2,
			AckedCreates: 1,
			AckedUpdates: 1,
			RowsFound:    1,
			UpdatesFound: 1,
			EventsFound:  2,
			Events:       2,
			DeliveryRows: 2,
			Received:     2,
		}}
	if f := clean.failures(true); len(f) != 0 {
		t.Fatalf("a clean run failed: %v", f)
	}
	inWindow := clean
	inWindow.load.Failed = []answer{
		{Start: at(17.9), End: at(18.1), Status: 500, Code: "INTERNAL"},
		{Start: at(24.9), End: at(24.95), Status: 500},
	}
	if f := inWindow.failures(false); len(f) != 0 {
		t.Errorf("5xx inside the window failed a lenient run: %v", f)
	}
	if f := inWindow.failures(true); len(f) != 1 || !strings.Contains(f[0], "2 5xx inside") {
		t.Errorf("strict: %v", f)
	}
	unavailable := clean
	unavailable.load.Failed = []answer{
		{Start: at(18.1), End: at(18.2), Status: 503, Code: "SERVICE_UNAVAILABLE", RetryAfter: "2"},
		{Start: at(18.3), End: at(18.4), Status: 503, Code: "SERVICE_UNAVAILABLE"},
	}
	if f := unavailable.failures(true); len(f) != 1 || !strings.Contains(f[0], "1 5xx inside") {
		t.Errorf("strict with one 503 lacking Retry-After: %v", f)
	}
	unavailable.load.Failed = unavailable.load.Failed[:1]
	if f := unavailable.failures(true); len(f) != 0 {
		t.Errorf("strict with a 503 and Retry-After: %v", f)
	}
	outside := clean
	outside.load.Failed = []answer{{Start: at(25.1), End: at(25.2), Status: 503}}
	if f := outside.failures(false); len(f) != 1 || !strings.Contains(f[0], "outside") {
		t.Errorf("5xx after the window: %v", f)
	}
	cut := clean
	cut.load.Transport = []answer{{Start: at(12.2), End: at(12.2)}, {Start: at(14), End: at(14)}}
	if f := cut.failures(false); len(f) != 1 || !strings.Contains(f[0], "1 requests without an answer") {
		t.Errorf("no answer while the API was up: %v", f)
	}
	lost := clean
	lost.counts.RowsFound, lost.counts.EventsFound, lost.drained = 0, 1, false
	lost.counts.Missing = []string{"delivery evt_x never arrived"}
	if f := lost.failures(false); len(f) != 3 {
		t.Errorf("lost write, event and delivery: %v", f)
	}
}
