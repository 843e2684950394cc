package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// WaitShare is the share of active-backend samples that were in one wait
// event ("CPU" when a backend was running, not waiting).
type WaitShare struct {
	Event string  `json:"event"`
	Share float64 `json:"share"`
}

// Snapshot is the oldest snapshot any backend of pmapi's database held in a
// sample: a row deleted after it was taken stays in the heap and its index
// entries stay visitable until it ends.
type Snapshot struct {
	AgeXids     int64   `json:"ageXids"`
	XactSeconds float64 `json:"transactionSeconds"`
	BackendType string  `json:"backendType"`
	State       string  `json:"state"`
	Query       string  `json:"query"`
}

// waitSampler reads pg_stat_activity every 100 ms while a phase runs (one
// connection, a statement of well under a millisecond a sample).
type waitSampler struct {
	stop chan struct{}
	done chan *ServerStats
}

const waitSampleEvery = 100 * time.Millisecond

func sampleWaits(ctx context.Context, adminURL, db string) *waitSampler {
	s := &waitSampler{stop: make(chan struct{}), done: make(chan *ServerStats, 1)}
	go func() {
		out := &ServerStats{}
		defer func() { s.done <- out }()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		counts := map[string]int{}
		samples, active := 0, 0
		tick := time.NewTicker(waitSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				for ev, n := range counts {
					out.Waits = append(out.Waits, WaitShare{Event: ev, Share: float64(n) / float64(active)})
				}
				sortWaits(out.Waits)
				if samples > 0 {
					out.ActiveBackends = float64(active) / float64(samples)
				}
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := conn.Query(ctx, `select coalesce(wait_event_type || ':' || wait_event, 'CPU'), backend_type,
					coalesce(age(backend_xmin), 0), coalesce(extract(epoch from now() - xact_start), 0),
					coalesce(state, ''), left(query, 100)
				from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, db)
			if err != nil {
				continue
			}
			samples++
			var ev, typ, state, query string
			var age int64
			var secs float64
			_, _ = pgx.ForEachRow(rows, []any{&ev, &typ, &age, &secs, &state, &query}, func() error {
				if state == "active" {
					active++
					counts[ev]++
				}
				if age > 0 && (out.OldestSnapshot == nil || age > out.OldestSnapshot.AgeXids) {
					out.OldestSnapshot = &Snapshot{AgeXids: age, XactSeconds: secs, BackendType: typ, State: state, Query: query}
				}
				return nil
			})
		}
	}()
	return s
}

// finish stops the sampler and returns what it saw (empty when it could not
// connect).
func (s *waitSampler) finish() *ServerStats {
	if s == nil {
		return nil
	}
	close(s.stop)
	return <-s.done
}
