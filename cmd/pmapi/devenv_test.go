package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestDevKeepsItsCredentials: a restart on the same data prints the session,
// key and operator token of the run before (through .pmapi/dev.env); only one
// that stopped working is replaced.
func TestDevKeepsItsCredentials(t *testing.T) {
	ctx := context.Background()
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.ExtraDatabase(t)
	cfg.DatabaseURL, cfg.MigrateURL, cfg.Shards = db.AppURL, db.OwnerURL, nil
	cfg.SecretKey, cfg.MetricsAddr, cfg.AdminToken = seal.Random(), "off", ""
	s, err := startServer(ctx, cfg, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()

	first, err := seedDemo(ctx, s.dir, s.auth, time.Hour, kept{})
	if err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "dev.env")
	b := banner{Base: "http://127.0.0.1:1", Demo: first, AdminToken: "pmadm_x"}
	if err := writeDevEnv(env, b.exports()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(env); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want mode 0600", env, fi.Mode(), err)
	}
	k := readKept(env)
	if k != (kept{SID: first.SID, APIKey: first.APIKey, AdminToken: "pmadm_x"}) {
		t.Fatalf("read back %+v", k)
	}

	again, err := seedDemo(ctx, s.dir, s.auth, time.Hour, k)
	if err != nil {
		t.Fatal(err)
	}
	if again.SID != first.SID || again.APIKey != first.APIKey || again.AppClientID != first.AppClientID ||
		again.WorkspaceID != first.WorkspaceID {
		t.Errorf("restart changed the credentials:\n%+v\n%+v", first, again)
	}

	// A revoked key and an unknown session are replaced, and the old key stays revoked.
	res, err := s.dir.Resolve(ctx, first.AppClientID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := authz.ListKeys(ctx, res.Shard, res.Workspace.ID, first.AppClientID, uuid.Nil, 10)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	if _, err := authz.RevokeKey(ctx, res.Shard, res.Workspace.ID, first.AppClientID, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	s.auth.Reset()
	k.SID = "pms_" + "x"
	third, err := seedDemo(ctx, s.dir, s.auth, time.Hour, k)
	if err != nil {
		t.Fatal(err)
	}
	if third.APIKey == first.APIKey || third.SID == first.SID {
		t.Errorf("a revoked key or a foreign session was kept: %+v", third)
	}
	if _, err := s.auth.Authenticate(ctx, third.AppClientID, third.APIKey); err != nil {
		t.Errorf("the new key: %v", err)
	}
}

// TestDevAllowsLoopbackWebhooksUnlessTold: dev opens loopback receivers (plain
// http too) by default; PMAPI_WEBHOOK_ALLOW_LOOPBACK=false closes both again,
// and serve never opens plain http.
func TestDevAllowsLoopbackWebhooksUnlessTold(t *testing.T) {
	for env, want := range map[string]bool{"": true, "true": true, "false": false, "0": false} {
		t.Setenv("PMAPI_WEBHOOK_ALLOW_LOOPBACK", env)
		cfg, err := loadConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.webhookLoopbackHTTP {
			t.Errorf("serve's config with %q allows plain http", env)
		}
		devDefaults(&cfg)
		if cfg.WebhookLoopback != want || cfg.webhookLoopbackHTTP != want {
			t.Errorf(
				"dev with PMAPI_WEBHOOK_ALLOW_LOOPBACK=%q: loopback %v, http %v; want %v",
				env,
				cfg.WebhookLoopback,
				cfg.webhookLoopbackHTTP,
				want,
			)
		}
	}
}
