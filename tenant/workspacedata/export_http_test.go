package workspacedata_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

type exportLine struct {
	Table string         `json:"table"`
	Row   map[string]any `json:"row"`
	Error map[string]any `json:"error"`
}

func export(t *testing.T, env *apitest.Env, ws string) []exportLine {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + ws + "/export", Header: env.Admin()})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("export: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	var lines []exportLine
	for _, raw := range bytes.Split(bytes.TrimSuffix(r.Raw, []byte("\n")), []byte("\n")) {
		var l exportLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("line %q: %v", raw, err)
		}
		if l.Error != nil {
			t.Fatalf("the export failed: %v", l.Error)
		}
		lines = append(lines, l)
	}
	return lines
}

// TestExportHoldsEveryRow: the NDJSON of a workspace has, for every table with
// a workspace_id column (and workspaces), as many lines as the table has rows
// of the workspace, and no row of another workspace filled the same way.
func TestExportHoldsEveryRow(t *testing.T) {
	t.Parallel()
	env, hook := newEnv(t)
	a, b := env.NewTenant(t), env.NewTenant(t)
	fill(t, env, a, hook)
	fill(t, env, b, hook)
	want := counts(t, a.WorkspaceID)
	if len(want) < 12 {
		t.Fatalf("the fixture reaches only %d tables: %v", len(want), sortedKeys(want))
	}
	got := map[string]int{}
	lines := export(t, env, a.WorkspaceID)
	for _, l := range lines {
		got[l.Table]++
		owner := l.Row["workspace_id"]
		if l.Table == workspacedata.WorkspacesTable {
			owner = l.Row["id"]
		}
		if owner != a.WorkspaceID {
			t.Errorf("%s row of workspace %v in %s's export: %v", l.Table, owner, a.WorkspaceID, l.Row)
		}
	}
	for _, table := range slices.Concat(sortedKeys(want), sortedKeys(got)) {
		if got[table] != want[table] {
			t.Errorf("%s: %d lines, %d rows of the workspace", table, got[table], want[table])
		}
	}
	if lines[0].Table != workspacedata.WorkspacesTable {
		t.Errorf("first line is of %s, want the workspace's own row", lines[0].Table)
	}
}

// TestExportShowsSecretsAsStored: keys and webhook secrets appear hashed or
// sealed, never as the API gave them out.
func TestExportShowsSecretsAsStored(t *testing.T) {
	t.Parallel()
	env, hook := newEnv(t)
	tn := env.NewTenant(t)
	_, secret := tn.Subscribe(t, hook, "*")
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/export",
		Header: env.Admin()})
	for what, clear := range map[string]string{"API key": tn.Key, "webhook secret": secret, "session": tn.SID} {
		if clear == "" || bytes.Contains(r.Raw, []byte(clear)) {
			t.Errorf("the export holds the %s in clear (%q)", what, clear)
		}
	}
	var keys int
	for _, l := range export(t, env, tn.WorkspaceID) {
		if l.Table == "api_keys" {
			keys++
			if h, _ := l.Row["hash"].(string); !strings.HasPrefix(h, `\x`) {
				t.Errorf("api_keys.hash is %v, want the stored bytes as \\x hex", l.Row["hash"])
			}
		}
	}
	if keys == 0 {
		t.Error("no api_keys line")
	}
}

func TestExportAnswers(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	for path, want := range map[string]int{
		"/admin/v1/workspaces/not-a-uuid/export":                           404,
		"/admin/v1/workspaces/0193e7a4-1b2c-7d3e-8f40-123456789abc/export": 404,
	} {
		r := env.Do(t, apitest.Request{Method: "GET", Path: path, Header: env.Admin()})
		apitest.WantError(t, r, want, "NOT_FOUND")
	}
	apitest.WantError(t, env.Do(t, apitest.Request{Method: "DELETE", Path: "/admin/v1/workspaces/not-a-uuid",
		Header: env.Admin()}), 404, "NOT_FOUND")
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + env.NewTenant(t).WorkspaceID +
		"/export"})
	if r.Status != 401 {
		t.Errorf("without the operator token: %d", r.Status)
	}
	tn := env.NewTenant(t)
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/admin/v1/workspaces/" + tn.WorkspaceID,
		Header: env.Admin()}); r.Status != 202 {
		t.Fatalf("erase: %d %s", r.Status, r.Raw)
	}
	apitest.WantError(t, env.Do(t, apitest.Request{Method: "GET",
		Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/export", Header: env.Admin()}), 409, "CONFLICT")
	if err := workspacedata.Erase(context.Background(), env.Directory, uuidOf(t, tn.WorkspaceID)); err != nil {
		t.Fatal(err)
	}
}
