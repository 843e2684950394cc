package pgcluster

import (
	"context"
	"testing"
)

// TestCrashRestartKeepsCommittedData: after an immediate restart the server
// answers on the same URL with every committed row, and a server given by URL
// cannot be restarted.
func TestCrashRestartKeepsCommittedData(t *testing.T) {
	bin := serverBinaries(t)
	ctx := context.Background()
	srv, err := startLocal(ctx, bin, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(ctx)
	runSQL(t, srv.AdminURL, "create table kept (v text); insert into kept values ('committed')")
	if err := srv.CrashRestart(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := kept(srv.AdminURL); err != nil || v != "committed" {
		t.Fatalf("after the restart: %q, %v", v, err)
	}
	if err := (&Server{AdminURL: srv.AdminURL, Source: "url"}).CrashRestart(ctx); err == nil {
		t.Error("a server given by URL was restarted")
	}
}
