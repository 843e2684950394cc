package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestAdminExportAndErase drives `pmapi admin workspace export|erase`.
func TestAdminExportAndErase(t *testing.T) {
	t.Setenv("PMAPI_DATABASE_URL", testdb.Database(t).AppURL)
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := runAdmin(ctx, args, &out)
		return out.String(), err
	}
	out, err := run("workspace", "create", "--name", "leaving")
	if err != nil {
		t.Fatal(err)
	}
	var ws map[string]any
	if err := json.Unmarshal([]byte(out), &ws); err != nil {
		t.Fatalf("create printed %q", out)
	}
	id := ws["workspaceId"].(string)
	if _, err := run("user", "create", "--workspace", id, "--email", "leaving@example.com", "--name", "L"); err != nil {
		t.Fatal(err)
	}

	out, err = run("workspace", "export", id)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Table string         `json:"table"`
			Row   map[string]any `json:"row"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		tables[l.Table]++
	}
	for _, want := range []string{"workspaces", "users", "user_emails", "client_directory"} {
		if tables[want] != 1 {
			t.Errorf("export has %d rows of %s, want 1: %v", tables[want], want, tables)
		}
	}

	out, err = run("workspace", "erase", id)
	if err != nil || !strings.Contains(out, `"erasure"`) || !strings.Contains(out, `"SUSPENDED"`) {
		t.Errorf("erase: %v %s", err, out)
	}
	if _, err := run("workspace", "export", id); err == nil || !strings.Contains(err.Error(), "being erased") {
		t.Errorf("export while erasing: %v", err)
	}
	if _, err := run("workspace", "export", "nope"); err == nil {
		t.Error("export of a malformed id succeeded")
	}
	if _, err := run("workspace", "erase"); err == nil {
		t.Error("erase without an id succeeded")
	}
}
