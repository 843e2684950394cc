package quota

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// MonthUsed reads a workspace's requests in the current UTC month
// (usage.Counter.MonthRequests: what is flushed plus this process's
// unflushed counts).
type MonthUsed func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (int64, error)

// MonthGuard holds each workspace's requests to its requestsPerMonth quota
// without a database read per request: it reads the workspace's limit and
// its month's count once per refresh interval (a minute, the usage flush's
// own period), and counts the requests it admits in between in memory. A
// replica cannot see the requests other replicas admitted and have not
// flushed yet, so a workspace may go over by up to one refresh interval of
// their traffic; a new limit takes effect within the interval (at once on the
// replica that set it, through Forget).
type MonthGuard struct {
	used    MonthUsed
	refresh time.Duration
	now     func() time.Time

	mu         sync.Mutex
	workspaces map[uuid.UUID]*monthEntry
}

// monthEntry is what the guard knows of one workspace. Its own mutex makes
// concurrent requests of a workspace wait for one refresh instead of each
// reading the database.
type monthEntry struct {
	mu        sync.Mutex
	limit     *int64
	base      int64 // the month's requests at the refresh, this process's unflushed ones included
	admitted  int64 // admitted by this process since the refresh
	month     time.Month
	refreshed time.Time
}

// NewMonthGuard is a guard reading the month's count with used, refreshing
// each workspace's figures every refresh.
func NewMonthGuard(used MonthUsed, refresh time.Duration) *MonthGuard {
	return &MonthGuard{used: used, refresh: refresh, now: time.Now, workspaces: map[uuid.UUID]*monthEntry{}}
}

func (g *MonthGuard) entry(ws uuid.UUID) *monthEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.workspaces[ws]
	if !ok {
		e = &monthEntry{}
		g.workspaces[ws] = e
	}
	return e
}

// Forget drops what the guard knows of ws, so that its next request reads
// the limit again (the operator has just changed it on this replica).
func (g *MonthGuard) Forget(ws uuid.UUID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.workspaces, ws)
}

// Admit counts one request of workspace ws, or refuses it with 429
// QUOTA_EXCEEDED when the month's requests have reached the workspace's
// requestsPerMonth quota, saying the seconds until the next UTC month (the
// answer's Retry-After). A database error is returned as it is (the caller
// answers 503): the guard does not admit what it cannot check.
func (g *MonthGuard) Admit(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (retryAfter int, err error) {
	e := g.entry(ws)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := g.now().UTC()
	if e.refreshed.IsZero() || now.Sub(e.refreshed) >= g.refresh || now.Month() != e.month {
		l, err := Get(ctx, shard, ws)
		if err != nil {
			return 0, tenant.DBError(err)
		}
		e.limit, e.base, e.admitted = l.RequestsPerMonth, 0, 0
		if e.limit != nil {
			if e.base, err = g.used(ctx, shard, ws); err != nil {
				return 0, err
			}
			observe(RequestsPerMonth, e.base, *e.limit, false)
		}
		e.month, e.refreshed = now.Month(), now
	}
	if e.limit == nil {
		return 0, nil
	}
	used := e.base + e.admitted
	if used >= *e.limit {
		observe(RequestsPerMonth, used, *e.limit, true)
		return untilNextMonth(now), pmapi.Errorf(pmapi.CodeQuotaExceeded,
			"the workspace has made its %d requests of this month; the quota renews at the start of the next UTC "+
				"month, or the operator may raise it", *e.limit).
			With("quota", string(RequestsPerMonth)).With("limit", *e.limit).With("used", used)
	}
	e.admitted++
	return 0, nil
}

// untilNextMonth is the whole seconds from now to the first instant of the
// next UTC month, at least one.
func untilNextMonth(now time.Time) int {
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	return max(1, int(next.Sub(now).Seconds()+0.999))
}
