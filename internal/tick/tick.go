// Package tick runs a function on a period until its context ends: the loop
// that keeps caches, routes and River's node list fresh in the background.
package tick

import (
	"context"
	"time"
)

// Every calls fn every d until ctx ends; the first call comes after d, since
// each caller has already done the work once when it starts the loop.
func Every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
