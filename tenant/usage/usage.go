// Package usage counts what each workspace uses, per app and UTC day:
// requests by status class, events, and webhook deliveries and their
// failures (docs/decisions/usage-and-rate-budget.md).
//
// Counting is in memory, a map increment under a mutex, never a write per
// request; Flush adds what a process counted to usage_daily once a minute
// (and when it stops gracefully), one transaction per workspace, so the
// replicas' counts add up in the table. A process that crashes loses what it
// counted since its last flush: at most a minute's worth.
package usage

import (
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Counts are one row of usage: what a workspace's app used on one day.
type Counts struct {
	Requests2xx      int64
	Requests4xx      int64
	Requests5xx      int64
	Events           int64
	Deliveries       int64
	DeliveriesFailed int64
}

func (c *Counts) add(o Counts) {
	c.Requests2xx += o.Requests2xx
	c.Requests4xx += o.Requests4xx
	c.Requests5xx += o.Requests5xx
	c.Events += o.Events
	c.Deliveries += o.Deliveries
	c.DeliveriesFailed += o.DeliveriesFailed
}

// Requests is the requests of every status class.
func (c Counts) Requests() int64 { return c.Requests2xx + c.Requests4xx + c.Requests5xx }

// key is what a row of usage is counted under. The workspace is its text
// form, the way the request's middleware already holds it; client is empty for
// what belongs to the workspace rather than to one app (events).
type key struct {
	workspace string
	client    string
	day       int32 // days since 1970-01-01, UTC
}

func dayOf(t time.Time) int32 { return int32(t.Unix() / 86400) }

func dateOf(day int32) time.Time { return time.Unix(int64(day)*86400, 0).UTC() }

// Counter holds one process's counts until they are flushed.
type Counter struct {
	mu      sync.Mutex
	pending map[key]*Counts
	// flushing is held for writing while a flush moves counts from memory to
	// the table, so that a reader of both (MonthRequests) sees each count
	// exactly once.
	flushing sync.RWMutex
}

// NewCounter makes an empty counter.
func NewCounter() *Counter { return &Counter{pending: map[key]*Counts{}} }

// process is the counter of everything this process counts outside a
// request: the workers' events and deliveries.
var process = NewCounter()

// Process returns this process's counter, which pmapi serve also hands the
// API and flushes.
func Process() *Counter { return process }

// counts returns the row of k, made when absent. k's strings may point into
// a request's buffers, reused once it is answered: a new row keeps copies.
func (c *Counter) counts(k key) *Counts {
	n := c.pending[k]
	if n == nil {
		n = &Counts{}
		k.workspace, k.client = strings.Clone(k.workspace), strings.Clone(k.client)
		c.pending[k] = n
	}
	return n
}

// Request counts one answered request of workspace's app clientID by the
// class of its status; anything below 400 counts as 2xx (redirects and 304s
// are successes to a client).
func (c *Counter) Request(workspace, clientID string, status int, at time.Time) {
	c.mu.Lock()
	n := c.counts(key{workspace, clientID, dayOf(at)})
	switch {
	case status >= 500:
		n.Requests5xx++
	case status >= 400:
		n.Requests4xx++
	default:
		n.Requests2xx++
	}
	c.mu.Unlock()
}

// Events counts n events of workspace fanned out.
func (c *Counter) Events(workspace uuid.UUID, n int, at time.Time) {
	c.mu.Lock()
	c.counts(key{workspace.String(), "", dayOf(at)}).Events += int64(n)
	c.mu.Unlock()
}

// Delivery counts one delivery attempt to a subscription of workspace's app
// clientID, and whether it failed.
func (c *Counter) Delivery(workspace uuid.UUID, clientID string, failed bool, at time.Time) {
	c.mu.Lock()
	n := c.counts(key{workspace.String(), clientID, dayOf(at)})
	n.Deliveries++
	if failed {
		n.DeliveriesFailed++
	}
	c.mu.Unlock()
}

// take empties the counter and returns what it held.
func (c *Counter) take() map[key]*Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.pending
	c.pending = make(map[key]*Counts, len(out))
	return out
}

// putBack adds counts a flush could not write to what was counted since.
func (c *Counter) putBack(rows map[key]*Counts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range rows {
		if n := c.pending[k]; n != nil {
			n.add(*v)
		} else {
			c.pending[k] = v
		}
	}
}

// pendingRequests is what this process counted and has not flushed of
// workspace's requests from day on.
func (c *Counter) pendingRequests(workspace string, from int32) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for k, v := range c.pending {
		if k.workspace == workspace && k.day >= from {
			sum += v.Requests()
		}
	}
	return sum
}
