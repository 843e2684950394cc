package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// deploymentSecret is the PMAPI_SECRET_KEY of every process this package's
// tests start over its one database, as all instances of a deployment share
// one: the OAuth signing key sealed under it is server-wide.
var deploymentSecret = seal.Random()

// TestAdminCLI drives `pmapi admin ...` through its whole set of commands.
func TestAdminCLI(t *testing.T) {
	t.Setenv("PMAPI_DATABASE_URL", testdb.Database(t).AppURL)
	ctx := context.Background()
	run := func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := runAdmin(ctx, args, &out); err != nil {
			t.Fatalf("admin %s: %v", strings.Join(args, " "), err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("admin %s printed %q", strings.Join(args, " "), out.String())
		}
		return v
	}
	ws := run("workspace", "create", "--name", "CLI workspace")
	id := ws["workspaceId"].(string)
	if ws["status"] != "ACTIVE" || !strings.HasPrefix(ws["consoleClientId"].(string), "pm_cli_") {
		t.Fatalf("create: %v", ws)
	}
	if got := run("workspace", "suspend", id); got["status"] != "SUSPENDED" {
		t.Errorf("suspend: %v", got)
	}
	if got := run("workspace", "resume", id); got["status"] != "ACTIVE" {
		t.Errorf("resume: %v", got)
	}
	if got := run("workspace", "get", id); got["name"] != "CLI workspace" {
		t.Errorf("get: %v", got)
	}
	if got := run("workspace", "place", id, "--shard", "default"); got["shard"] != "default" {
		t.Errorf("place: %v", got)
	}
	if got := run("workspace", "list"); !strings.Contains(toJSON(got), id) {
		t.Errorf("list lacks the workspace: %v", got)
	}
	user := run("user", "create", "--workspace", id, "--email", "cli@example.com", "--name", "CLI")
	sess := run("session", "issue", "--workspace", id, "--user", user["id"].(string), "--ttl", "1h")
	if !strings.HasPrefix(sess["sid"].(string), "pms_") {
		t.Errorf("session: %v", sess)
	}
	if got := run("workspace", "quotas", id); toJSON(got["apps"]) != `{"limit":null,"used":0}` {
		t.Errorf("quotas before any: %v", got)
	}
	got := run("workspace", "quotas", id, "--apps", "3", "--webhooks", "unlimited")
	if toJSON(got["apps"]) != `{"limit":3,"used":0}` || toJSON(got["keysPerApp"]) != `{"limit":null,"used":0}` {
		t.Errorf("quotas set: %v", got)
	}
	if err := runAdmin(ctx, []string{"workspace", "quotas", id, "--apps", "many"}, &bytes.Buffer{}); err == nil {
		t.Error("a quota of many accepted")
	}
	// The operator's changes are in the workspace's log, newest first.
	log := run("workspace", "audit", id, "--action", "quota.updated")["items"].([]any)
	if len(log) != 1 || toJSON(log[0].(map[string]any)["actor"]) != `{"id":"admin","type":"operator"}` {
		t.Errorf("audit of quota.updated: %v", log)
	}
	if log := run("workspace", "audit", id)["items"].([]any); len(log) != 6 {
		// suspended, resumed, placed, user invited, session issued, quotas set
		t.Errorf("audit: %d entries: %v", len(log), log)
	}

	t.Setenv("PMAPI_SECRET_KEY", deploymentSecret)
	first, second := run("oauth", "rotate-key"), run("oauth", "rotate-key")
	if !strings.HasPrefix(first["kid"].(string), "k_") || first["kid"] == second["kid"] {
		t.Errorf("rotate-key: %v then %v", first, second)
	}
	// The first key stays published beside the second until its tokens expire.
	var published int
	kids := []string{first["kid"].(string), second["kid"].(string)}
	err := testdb.AppPool(t).QueryRow(ctx, `select count(*) from oauth_signing_keys where kid = any($1)
		and (retired_at is null or publish_until > now())`, kids).Scan(&published)
	if err != nil || published != 2 {
		t.Errorf("published keys after rotation: %d %v", published, err)
	}

	var out bytes.Buffer
	err = runAdmin(ctx, []string{"user", "create", "--workspace", id, "--email", "nope", "--name", "X"}, &out)
	if err == nil || !strings.Contains(err.Error(), "VALIDATION_FAILED") {
		t.Errorf("bad email: %v", err)
	}
	if err := runAdmin(ctx, []string{"workspace", "explode"}, &out); err == nil {
		t.Error("unknown command accepted")
	}
}
