package api_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

var clientIDFormat = regexp.MustCompile(`^pm_cli_[0-9A-Za-z]{20}$`)

// workspace is what the admin API returned for a fresh workspace and its user.
type workspace struct {
	ID, ConsoleClientID, UserID, SID string
}

func createWorkspace(t *testing.T, env *apitest.Env, name string) workspace {
	t.Helper()
	r := env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/admin/v1/workspaces",
			Header: env.Admin(),
			Body:   map[string]any{"name": name},
		},
	)
	if r.Status != 201 {
		t.Fatalf("create workspace: %d %s", r.Status, r.Raw)
	}
	w := workspace{ID: r.Str("workspaceId"), ConsoleClientID: r.Str("consoleClientId")}
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + w.ID + "/users", Header: env.Admin(),
		Body: map[string]any{"email": "owner@" + w.ID[:8] + ".example.com", "name": "Owner"}})
	if r.Status != 201 {
		t.Fatalf("create user: %d %s", r.Status, r.Raw)
	}
	w.UserID = r.Str("id")
	r = env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/admin/v1/workspaces/" + w.ID + "/users/" + w.UserID + "/sessions",
			Header: env.Admin(),
		},
	)
	if r.Status != 201 {
		t.Fatalf("issue session: %d %s", r.Status, r.Raw)
	}
	w.SID = r.Str("sid")
	return w
}

func sessionCall(env *apitest.Env, t *testing.T, clientID, sid string) *apitest.Response {
	return env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/session",
		Header: map[string]string{"X-Client-ID": clientID}, Cookies: map[string]string{"sid": sid}})
}

func TestAdminCreateWorkspace(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	r := env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/admin/v1/workspaces",
			Header: env.Admin(),
			Body:   map[string]any{"name": "  Acme  "},
		},
	)
	if r.Status != 201 {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	if r.Str("name") != "Acme" || r.Str("status") != "ACTIVE" || r.Str("shard") != "default" {
		t.Errorf("unexpected workspace: %s", r.Raw)
	}
	if !clientIDFormat.MatchString(r.Str("consoleClientId")) {
		t.Errorf("consoleClientId %q is not pm_cli_ + 20 base62", r.Str("consoleClientId"))
	}
	got := env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + r.Str("workspaceId"), Header: env.Admin()},
	)
	if got.Status != 200 || got.Str("consoleClientId") != r.Str("consoleClientId") {
		t.Errorf("get: %d %s", got.Status, got.Raw)
	}
	bad := env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/admin/v1/workspaces",
			Header: env.Admin(),
			Body:   map[string]any{"name": "x", "shard": "mars"},
		},
	)
	if bad.Status != 400 || bad.ErrorCode() != "VALIDATION_FAILED" {
		t.Errorf("unknown shard: %d %s", bad.Status, bad.Raw)
	}
}

func TestAdminListWorkspacesPages(t *testing.T) {
	env := apitest.New(t)
	created := map[string]bool{}
	for i := 0; i < 3; i++ {
		created[createWorkspace(t, env, "paged").ID] = true
	}
	seen := map[string]bool{}
	path := "/admin/v1/workspaces?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		r := env.Do(t, apitest.Request{Method: "GET", Path: path, Header: env.Admin()})
		if r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Raw)
		}
		items := r.Data()["items"].([]any)
		if len(items) > 2 {
			t.Fatalf("page of %d items with limit=2", len(items))
		}
		for _, it := range items {
			id := it.(map[string]any)["workspaceId"].(string)
			if seen[id] {
				t.Fatalf("workspace %s served twice", id)
			}
			seen[id] = true
		}
		path = ""
		if next, ok := r.Data()["nextCursor"].(string); ok {
			path = "/admin/v1/workspaces?limit=2&cursor=" + next
		}
	}
	for id := range created {
		if !seen[id] {
			t.Errorf("workspace %s never listed", id)
		}
	}
}

func TestAdminUsersAndSessions(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	a := createWorkspace(t, env, "A")
	b := createWorkspace(t, env, "B")

	t.Run("session identifies the user", func(t *testing.T) {
		r := sessionCall(env, t, a.ConsoleClientID, a.SID)
		if r.Status != 200 || r.Str("user.id") != a.UserID || r.Str("workspace.workspaceId") != a.ID {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("sid of another workspace is invalid", func(t *testing.T) {
		r := sessionCall(env, t, b.ConsoleClientID, a.SID)
		if r.Status != 401 || r.ErrorCode() != "INVALID_TOKEN" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("unknown client id", func(t *testing.T) {
		r := sessionCall(env, t, "pm_cli_00000000000000000000", a.SID)
		if r.Status != 401 || r.ErrorCode() != "INVALID_TOKEN" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("forged sid", func(t *testing.T) {
		r := sessionCall(env, t, a.ConsoleClientID, "pms_"+a.SID[4:40]+"xxxx")
		if r.Status != 401 || r.ErrorCode() != "INVALID_TOKEN" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("missing sid", func(t *testing.T) {
		r := env.Do(
			t,
			apitest.Request{
				Method: "GET",
				Path:   "/openapi/v1/session",
				Header: map[string]string{"X-Client-ID": a.ConsoleClientID},
			},
		)
		if r.Status != 401 || r.ErrorCode() != "UNAUTHENTICATED" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("duplicate email", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/users", Header: env.Admin(),
			Body: map[string]any{"email": "OWNER@" + a.ID[:8] + ".example.com", "name": "Again"}})
		if r.Status != 409 || r.ErrorCode() != "CONFLICT" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("bad email", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/users", Header: env.Admin(),
			Body: map[string]any{"email": "not-an-address", "name": "X"}})
		if r.Status != 400 || r.Data() != nil ||
			r.Body["error"].(map[string]any)["details"].(map[string]any)["field"] != "email" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("session for another workspace's user is 404", func(t *testing.T) {
		r := env.Do(
			t,
			apitest.Request{
				Method: "POST",
				Path:   "/admin/v1/workspaces/" + a.ID + "/users/" + b.UserID + "/sessions",
				Header: env.Admin(),
			},
		)
		if r.Status != 404 || r.ErrorCode() != "NOT_FOUND" {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	t.Run("expired session", func(t *testing.T) {
		r := env.Do(
			t,
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/users/" + a.UserID + "/sessions",
				Header: env.Admin(), Body: map[string]any{"ttlSeconds": 1}},
		)
		if r.Status != 201 {
			t.Fatalf("issue: %d %s", r.Status, r.Raw)
		}
		time.Sleep(1100 * time.Millisecond)
		got := sessionCall(env, t, a.ConsoleClientID, r.Str("sid"))
		if got.Status != 401 || got.ErrorCode() != "TOKEN_EXPIRED" {
			t.Fatalf("got %d %s", got.Status, got.Raw)
		}
	})
}

func TestSuspendBlocksAndResumeRestores(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	a := createWorkspace(t, env, "to suspend")
	other := createWorkspace(t, env, "bystander")

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/suspend", Header: env.Admin()})
	if r.Status != 200 || r.Str("status") != "SUSPENDED" || r.Data()["suspendedAt"] == nil {
		t.Fatalf("suspend: %d %s", r.Status, r.Raw)
	}
	if got := sessionCall(env, t, a.ConsoleClientID, a.SID); got.Status != 403 ||
		got.ErrorCode() != "WORKSPACE_SUSPENDED" {
		t.Errorf("session call while suspended: %d %s", got.Status, got.Raw)
	}
	if got := env.Do(t, apitest.Request{
		Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/users", Header: env.Admin(),
		Body: map[string]any{"email": "late@example.com", "name": "Late"},
	}); got.Status != 403 ||
		got.ErrorCode() != "WORKSPACE_SUSPENDED" {
		t.Errorf("create user while suspended: %d %s", got.Status, got.Raw)
	}
	if got := sessionCall(env, t, other.ConsoleClientID, other.SID); got.Status != 200 {
		t.Errorf("another workspace is affected by the suspension: %d %s", got.Status, got.Raw)
	}

	r = env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + a.ID + "/resume", Header: env.Admin()})
	if r.Status != 200 || r.Str("status") != "ACTIVE" || r.Data()["suspendedAt"] != nil {
		t.Fatalf("resume: %d %s", r.Status, r.Raw)
	}
	if got := sessionCall(env, t, a.ConsoleClientID, a.SID); got.Status != 200 {
		t.Errorf("session call after resume: %d %s", got.Status, got.Raw)
	}
}

func TestAdminPlaceWorkspace(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	a := createWorkspace(t, env, "placed")
	place := func(shard string) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "PUT", Path: "/admin/v1/workspaces/" + a.ID + "/shard",
			Header: env.Admin(), Body: map[string]any{"shard": shard}})
	}
	if same := place("default"); same.Status != 200 || same.Str("shard") != "default" {
		t.Errorf("place on its own shard: %d %s", same.Status, same.Raw)
	}
	if unknown := place("nowhere"); unknown.Status != 400 || unknown.ErrorCode() != "VALIDATION_FAILED" {
		t.Errorf("place on an unknown shard: %d %s", unknown.Status, unknown.Raw)
	}
}
