package api_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// TestDatabaseDownIs503 cuts the app off its database (a TCP relay in front
// of PostgreSQL, then closed, as a restart does) and checks that every path
// that reaches the database answers 503 SERVICE_UNAVAILABLE with Retry-After,
// not 500: the credential lookup of a key not yet cached (middleware, the
// directory), a store's read and a store's transaction.
func TestDatabaseDownIs503(t *testing.T) {
	t.Parallel()
	relay := newRelay(t, testdb.Database(t).AppURL)
	pool, err := tenant.Connect(context.Background(), relay.url)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.NewOnPool(t, pool)
	t.Cleanup(pool.Close)
	tn := env.NewTenant(t)
	if r := tn.Get(t, "/openapi/v1/resource/project/list", nil); r.Status != 200 {
		t.Fatalf("list while up: %d %s", r.Status, r.Raw)
	}
	uncached := tn.WithKey(tn.NewKey(t))

	relay.cut()

	for name, r := range map[string]*apitest.Response{
		"store read":        tn.Get(t, "/openapi/v1/resource/project/list", nil),
		"store transaction": tn.Do(t, "POST", "/openapi/v1/resource/project/create", map[string]any{"name": "down"}),
		"credential lookup": uncached.Get(t, "/openapi/v1/resource/project/list", nil),
	} {
		if r.Status != 503 || r.ErrorCode() != "SERVICE_UNAVAILABLE" || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s with the database down: %d %s Retry-After=%q", name, r.Status, r.Raw, r.Header.Get("Retry-After"))
		}
	}
}

// relay forwards TCP connections to a PostgreSQL server until cut, which
// closes its listener and every connection it carries.
type relay struct {
	url   string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newRelay(t *testing.T, dbURL string) *relay {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	r := &relay{url: u.String(), ln: ln}
	t.Cleanup(r.cut)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, in, out)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return r
}

func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}
