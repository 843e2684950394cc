package api_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// countingConn counts what the API writes to PostgreSQL. pgx buffers a query,
// a batch or a pipeline and flushes it with one write, then waits for the
// answer, so writes are round trips.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// countedPool is a pool as the server's role whose every connection counts its
// writes into n. pgxpool pings a connection that sat idle for over a second
// before handing it out (one more round trip, only when the server is idle);
// that is turned off here so the count does not depend on how fast the test
// machine is.
func countedPool(t *testing.T, n *atomic.Int64) *pgxpool.Pool {
	t.Helper()
	cfg, err := tenant.PoolConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: n}, nil
	}
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestAuthenticatedReadIsOneRoundTrip counts, at the socket, the round trips to
// PostgreSQL of whole HTTP requests through the Fiber app: API-key
// authentication (cached), rate limit, the workspace binding and the query.
// Every read by id, every list and every search (with its filters and
// cursor) is one: the workspace setting and the query travel as one batch.
func TestAuthenticatedReadIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	env := apitest.NewOnPool(t, countedPool(t, &writes))
	tn := env.NewTenant(t)
	prj := tn.TaskProject(t)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "counted"})["id"].(string)
	risk := tn.Do(
		t,
		"POST",
		"/openapi/v1/resource/risk/create",
		map[string]any{"projectId": prj, "title": "counted", "severity": "LOW"},
	)
	if risk.Status != 201 {
		t.Fatalf("create risk: %d %s", risk.Status, risk.Raw)
	}
	cursor, _ := tn.Get(t, apitest.SearchPath, map[string]string{"q": "counted",
		"limit": "1"}).Data()["nextCursor"].(string)
	if cursor == "" {
		t.Fatal("no second page of the search")
	}
	reads := []struct{ name, path string }{
		{"task detail", apitest.TaskBase + "detail?id=" + task},
		{"task list", apitest.TaskBase + "list?limit=50&projectId=" + prj},
		{"project detail", "/openapi/v1/resource/project/detail?id=" + prj},
		{"risk detail", "/openapi/v1/resource/risk/detail?id=" + risk.Data()["id"].(string)},
		{"risk list", "/openapi/v1/resource/risk/list?projectId=" + prj},
		{"search", apitest.SearchPath + "?q=counted"},
		{"search with filters",
			apitest.SearchPath + "?q=counted&projectId=" + prj + "&status=TODO&updatedSince=2020-01-01"},
		{"search page", apitest.SearchPath + "?q=counted&limit=1&cursor=" + cursor},
	}
	for _, rd := range reads {
		t.Run(rd.name, func(t *testing.T) {
			// The first requests fill the key cache and each connection's
			// prepared-statement cache; a pool of a few connections is warm
			// after as many requests.
			for range 8 {
				if r := tn.Do(t, "GET", rd.path, nil); r.Status != 200 {
					t.Fatalf("GET %s: %d %s", rd.path, r.Status, r.Raw)
				}
			}
			// The pool's background writes (a key's last use flushed, routes
			// refreshed) can land inside one request's window and add to its
			// count; a request that itself takes two round trips takes them
			// on every try, so the fewest of five tries is the request's own.
			fewest := int64(-1)
			for range 5 {
				before := writes.Load()
				r := tn.Do(t, "GET", rd.path, nil)
				if r.Status != 200 {
					t.Fatalf("GET %s: %d %s", rd.path, r.Status, r.Raw)
				}
				if n := writes.Load() - before; fewest < 0 || n < fewest {
					fewest = n
				}
			}
			if fewest != 1 {
				t.Errorf("GET %s took at least %d round trips to PostgreSQL, want 1", rd.path, fewest)
			}
		})
	}
}
