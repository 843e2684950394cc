package authz_test

import (
	"context"
	"testing"
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// fixture is a workspace with one app and one key with every scope.
type fixture struct {
	dir      *tenant.Directory
	auth     *authz.Authenticator
	ws       tenant.Workspace
	shard    *tenant.Shard
	clientID string
	key      string
}

func setup(tb testing.TB) fixture {
	tb.Helper()
	ctx := context.Background()
	dir, shard := testdb.Directory(tb)
	ws := testdb.Workspace(tb, dir, "bench", "")
	app, _, err := authz.CreateApp(ctx, dir, shard, ws.ID, authz.NewApp{Name: "a", Scopes: authz.AllScopes()})
	if err != nil {
		tb.Fatal(err)
	}
	_, value, err := authz.CreateKey(ctx, shard, ws.ID, app.ClientID, authz.NewKey{Name: "k", Scopes: authz.AllScopes()})
	if err != nil {
		tb.Fatal(err)
	}
	return fixture{dir: dir, auth: authz.NewAuthenticator(dir), ws: ws, shard: shard, clientID: app.ClientID, key: value}
}

// cached is setup with the key authenticated once, so it is in the cache.
func cached(b *testing.B) (fixture, context.Context) {
	f := setup(b)
	ctx := context.Background()
	if _, err := f.auth.Authenticate(ctx, f.clientID, f.key); err != nil {
		b.Fatal(err)
	}
	return f, ctx
}

// BenchmarkAuthenticateCached measures the hot path: a key already in the cache,
// no database work.
func BenchmarkAuthenticateCached(b *testing.B) {
	f, ctx := cached(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.auth.Authenticate(ctx, f.clientID, f.key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateCachedParallel is the same under concurrency.
func BenchmarkAuthenticateCachedParallel(b *testing.B) {
	f, ctx := cached(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.auth.Authenticate(ctx, f.clientID, f.key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func TestSuspensionReachesCachedKeys(t *testing.T) {
	f := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	go f.auth.Run(ctx, func() { close(ready) })
	<-ready
	if _, err := f.auth.Authenticate(ctx, f.clientID, f.key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.dir.SetStatus(ctx, f.ws.ID, tenant.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for {
		_, err := f.auth.Authenticate(ctx, f.clientID, f.key)
		if pmapi.ErrorCode(err) == pmapi.CodeWorkspaceSuspended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a cached key still authenticates 1s after suspension: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := f.dir.SetStatus(ctx, f.ws.ID, tenant.StatusActive); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(time.Second)
	for {
		if _, err := f.auth.Authenticate(ctx, f.clientID, f.key); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("resume did not restore the key within 1s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
