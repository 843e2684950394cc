package pgcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeftoverServerIsStoppedAndRestarted: a server a killed pmapi left
// running in its directory is found by the next start, stopped with a one-line
// note, and the cluster starts again with its data; a postmaster.pid of a
// process that is gone only gets the note.
func TestLeftoverServerIsStoppedAndRestarted(t *testing.T) {
	bin := serverBinaries(t)
	ctx := context.Background()
	dir := serverReadableTempDir(t)
	// What a killed pmapi leaves: a server started by pg_ctl, its lock released.
	cb, err := claimBase(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	who, base, release, pw := cb.who, cb.dir, cb.release, cb.password
	orphan, err := startNode(ctx, bin, who, base, filepath.Join(base, "superuser.password"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	runSQL(t, nodeAdminURL(pw, orphan.port), "create table kept (v text); insert into kept values ('still here')")
	release()
	t.Cleanup(func() { _ = orphan.stop(context.Background()) })

	var log strings.Builder
	srv, err := startLocal(ctx, bin, Options{DataDir: dir, Log: &log})
	if err != nil {
		t.Fatalf("start beside a leftover server: %v", err)
	}
	defer srv.Stop(ctx)
	if !strings.Contains(log.String(), "stopped the server an earlier pmapi left running") ||
		strings.Contains(log.String(), "pg_ctl") {
		t.Errorf("log: %q, want one line saying the leftover was stopped", log.String())
	}
	runSQL(t, srv.AdminURL, "select v from kept")
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// A postmaster.pid whose process is gone (a crash of PostgreSQL itself).
	pidFile := filepath.Join(base, "data", "postmaster.pid")
	if err := os.WriteFile(pidFile, []byte("999999999\n"+filepath.Join(base, "data")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := who.own(pidFile); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	again, err := startLocal(ctx, bin, Options{DataDir: dir, Log: &log})
	if err != nil {
		t.Fatalf("start over a stale postmaster.pid: %v", err)
	}
	defer again.Stop(ctx)
	if !strings.Contains(log.String(), "did not stop cleanly") {
		t.Errorf("log: %q", log.String())
	}
}
