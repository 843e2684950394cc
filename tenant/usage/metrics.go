package usage

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// TopN is how many workspaces the top workspaces gauge names at most.
const TopN = 10

// topRequests is the one metric labelled by workspace, kept bounded: after
// each flush it holds the TopN workspaces by requests this process counted
// since the flush before, and nothing else (the ones that dropped out are
// deleted), so a scrape has at most TopN series of it per process
// (docs/decisions/usage-and-rate-budget.md).
var topRequests = promauto.NewGaugeVec(prometheus.GaugeOpts{
	Name: "pmapi_usage_top_workspace_requests_per_second",
	Help: "Requests a second this process answered for each of its 10 busiest workspaces over its last " +
		"usage flush interval; workspaces outside its top 10 have no series.",
}, []string{"workspace_id"})

// lastFlush is when the gauge was last set, and the workspaces it names.
var lastFlush = struct {
	sync.Mutex
	at    time.Time
	shown map[string]bool
}{at: time.Now(), shown: map[string]bool{}}

// observeTop replaces the gauge's series with the top workspaces of rows.
func observeTop(byWorkspace map[string][]row) {
	lastFlush.Lock()
	defer lastFlush.Unlock()
	now := time.Now()
	secs := now.Sub(lastFlush.at).Seconds()
	lastFlush.at = now
	type total struct {
		ws string
		n  int64
	}
	var all []total
	for ws, rows := range byWorkspace {
		var n int64
		for _, r := range rows {
			n += r.Requests()
		}
		if n > 0 {
			all = append(all, total{ws, n})
		}
	}
	slices.SortFunc(all, func(a, b total) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.ws, b.ws)) })
	all = all[:min(TopN, len(all))]
	shown := make(map[string]bool, len(all))
	for _, t := range all {
		shown[t.ws] = true
		topRequests.WithLabelValues(t.ws).Set(float64(t.n) / max(secs, 1e-3))
	}
	// Deleted rather than Reset first, so a scrape never sees the gauge empty.
	for ws := range lastFlush.shown {
		if !shown[ws] {
			topRequests.DeleteLabelValues(ws)
		}
	}
	lastFlush.shown = shown
}
