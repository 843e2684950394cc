package tick_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/tick"
)

// TestEveryCallsOnEachTickAndStopsWithItsContext: calls come once a period,
// none before the first period, and Every returns when its context ends.
func TestEveryCallsOnEachTickAndStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	returned := make(chan struct{})
	go func() {
		tick.Every(ctx, 5*time.Millisecond, func() {
			if calls.Add(1) == 3 {
				cancel()
			}
		})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("calls = %d, want 3 (the third cancels the context)", n)
	}
}

// TestEveryMakesNoCallWhenItsContextHasEnded: a context already done stops
// the loop before the first period.
func TestEveryMakesNoCallWhenItsContextHasEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tick.Every(ctx, time.Millisecond, func() { t.Error("called after the context ended") })
}
