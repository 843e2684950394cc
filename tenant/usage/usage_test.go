package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/usage"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// read returns workspace's stored rows of today by client id.
func read(t *testing.T, shard *tenant.Shard, ws uuid.UUID) map[string]usage.Counts {
	t.Helper()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	days, err := usage.Read(context.Background(), shard, ws, today.AddDate(0, 0, -40), today)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]usage.Counts{}
	for _, d := range days {
		if !d.Date.Equal(today) {
			t.Errorf("row of %s, want only today's (%s)", d.Date, today)
		}
		out[d.ClientID] = d.Counts
	}
	return out
}

func flush(t *testing.T, c *usage.Counter, dir *tenant.Directory) {
	t.Helper()
	if err := c.Flush(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
}

// TestFlushAddsEveryReplicasCounts: two counters (two replicas) and a third
// (one of them restarted) flush into the same rows; the stored totals are
// the sums, a flush with nothing new changes nothing, and another
// workspace's counts stay in its own rows.
func TestFlushAddsEveryReplicasCounts(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, "usage", "")
	other := testdb.Workspace(t, dir, "usage-other", "")
	now := time.Now()
	a, b := usage.NewCounter(), usage.NewCounter()
	for range 3 {
		a.Request(ws.ID.String(), "app_one", 200, now)
	}
	a.Request(ws.ID.String(), "app_one", 404, now)
	a.Request(ws.ID.String(), "app_two", 304, now)
	a.Events(ws.ID, 2, now)
	b.Request(ws.ID.String(), "app_one", 201, now)
	b.Request(ws.ID.String(), "app_one", 503, now)
	b.Events(ws.ID, 1, now)
	b.Delivery(ws.ID, "app_one", false, now)
	b.Delivery(ws.ID, "app_one", true, now)
	b.Request(other.ID.String(), "app_other", 200, now)
	flush(t, a, dir)
	flush(t, b, dir)
	flush(t, a, dir) // nothing new: nothing added twice

	restarted := usage.NewCounter()
	restarted.Request(ws.ID.String(), "app_one", 200, now)
	flush(t, restarted, dir)

	got := read(t, shard, ws.ID)
	want := map[string]usage.Counts{
		"app_one": {Requests2xx: 5, Requests4xx: 1, Requests5xx: 1, Deliveries: 2, DeliveriesFailed: 1},
		"app_two": {Requests2xx: 1},
		"":        {Events: 3},
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for client, w := range want {
		if got[client] != w {
			t.Errorf("client %q: %+v, want %+v", client, got[client], w)
		}
	}
	if o := read(t, shard, other.ID); len(o) != 1 || o["app_other"] != (usage.Counts{Requests2xx: 1}) {
		t.Errorf("the other workspace's rows: %v, want its one request alone", o)
	}
}

// TestAFailedFlushKeepsItsCounts: a flush the database refuses loses
// nothing; the next one writes the counts once.
func TestAFailedFlushKeepsItsCounts(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, "usage-down", "")
	down := testdb.Pool(t, testdb.Database(t).AppURL)
	downDir, _ := testdb.DirectoryOver(t, down)
	down.Close()

	c := usage.NewCounter()
	c.Request(ws.ID.String(), "app_one", 200, time.Now())
	if err := c.Flush(context.Background(), downDir); err == nil {
		t.Fatal("a flush over a closed pool succeeded")
	}
	c.Request(ws.ID.String(), "app_one", 200, time.Now())
	flush(t, c, dir)
	if got := read(t, shard, ws.ID)["app_one"].Requests2xx; got != 2 {
		t.Errorf("requests2xx %d after a failed flush and a good one, want 2", got)
	}
}

// TestMonthRequests counts the current UTC month's requests, flushed and not,
// and nothing of the month before or of another workspace.
func TestMonthRequests(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, "usage-month", "")
	other := testdb.Workspace(t, dir, "usage-month-other", "")
	now := time.Now().UTC()
	lastMonth := time.Date(now.Year(), now.Month(), 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	c := usage.NewCounter()
	c.Request(ws.ID.String(), "app_one", 200, now)
	c.Request(ws.ID.String(), "app_one", 429, now)
	c.Request(ws.ID.String(), "app_one", 200, lastMonth)
	c.Request(other.ID.String(), "app_two", 200, now)
	flush(t, c, dir)
	c.Request(ws.ID.String(), "app_two", 500, now) // counted, not flushed
	c.Request(ws.ID.String(), "app_two", 200, lastMonth)
	got, err := c.MonthRequests(context.Background(), shard, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3 {
		t.Errorf("MonthRequests = %d, want 3 (two flushed, one in memory)", got)
	}
}

// TestTopWorkspacesGaugeIsBounded: the gauge names the ten busiest
// workspaces of the last flush and drops those that left the top.
func TestTopWorkspacesGaugeIsBounded(t *testing.T) {
	dir, _ := testdb.Directory(t)
	c := usage.NewCounter()
	var ids []uuid.UUID
	for i := range 12 {
		id := uuid.New() // no such workspace: the flush drops its counts
		ids = append(ids, id)
		for range i + 1 {
			c.Request(id.String(), "app", 200, time.Now())
		}
	}
	flush(t, c, dir)
	shown := topSeries(t)
	if len(shown) != usage.TopN {
		t.Fatalf("%d series, want %d: %v", len(shown), usage.TopN, shown)
	}
	for _, quiet := range ids[:2] {
		if shown[quiet.String()] {
			t.Errorf("workspace %s, the least busy, is in the top", quiet)
		}
	}
	c.Request(ids[0].String(), "app", 200, time.Now())
	flush(t, c, dir)
	if shown := topSeries(t); len(shown) != 1 || !shown[ids[0].String()] {
		t.Errorf("after a flush of one workspace the gauge shows %v, want that one alone", shown)
	}
}

func topSeries(t *testing.T) map[string]bool {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "pmapi_usage_top_workspace_requests_per_second" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetGauge().GetValue() <= 0 {
				t.Errorf("series %v has value %v", m.GetLabel(), m.GetGauge().GetValue())
			}
			out[m.GetLabel()[0].GetValue()] = true
		}
	}
	return out
}

// TestNoUsageOutlivesAnErasure: counts of a workspace whose erasure has
// begun are dropped at the flush, so its job cannot leave usage rows behind.
func TestNoUsageOutlivesAnErasure(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, "usage-erased", "")
	c := usage.NewCounter()
	c.Request(ws.ID.String(), "app_one", 200, time.Now())
	if _, err := workspacedata.Start(context.Background(), dir, ws.ID); err != nil {
		t.Fatal(err)
	}
	flush(t, c, dir)
	if got := read(t, shard, ws.ID); len(got) != 0 {
		t.Errorf("usage rows of a workspace being erased: %v", got)
	}
	if n, err := c.MonthRequests(context.Background(), shard, ws.ID); err != nil || n != 0 {
		t.Errorf("MonthRequests after the flush: %d %v, want the dropped counts gone", n, err)
	}
}
