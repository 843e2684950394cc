package replicas_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/replicas"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }

// TestReplicasCountEachOther: replicas that beat count each other; one that
// stops gracefully leaves at once, one that just stops beating drops out
// after the expiry.
func TestReplicasCountEachOther(t *testing.T) {
	ctx := context.Background()
	pool := testdb.AppPool(t)
	const beat = 100 * time.Millisecond
	a, b, c := replicas.New(pool, beat, nil), replicas.New(pool, beat, nil), replicas.New(pool, beat, nil)
	if a.Count() != 1 {
		t.Fatalf("before any beat: %d, want 1 (itself)", a.Count())
	}
	for _, m := range []*replicas.Membership{a, b, c} {
		if err := m.Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Beat(ctx); err != nil || a.Count() != 3 {
		t.Fatalf("after all three beat: %d %v, want 3", a.Count(), err)
	}

	// b leaves gracefully: its row goes when Run returns.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { b.Run(runCtx); close(done) }()
	stop()
	<-done
	if err := a.Beat(ctx); err != nil || a.Count() != 2 {
		t.Fatalf("after b left: %d %v, want 2", a.Count(), err)
	}

	// c dies: no goodbye, it just stops beating.
	time.Sleep(a.Expiry() + beat)
	if err := a.Beat(ctx); err != nil || a.Count() != 1 {
		t.Fatalf("after c's rows expired: %d %v, want 1", a.Count(), err)
	}

	if err := c.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Beat(ctx); err != nil || a.Count() != 2 {
		t.Fatalf("after c came back: %d %v, want 2", a.Count(), err)
	}
	// A database that cannot be reached leaves the last count.
	down := testdb.Pool(t, testdb.Database(t).AppURL)
	down.Close()
	d := replicas.New(down, beat, nil)
	if err := d.Beat(ctx); err == nil || d.Count() != 1 {
		t.Errorf("a beat over a closed pool: %v, count %d; want an error and the count kept", err, d.Count())
	}
}
