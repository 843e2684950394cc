package api_test

import (
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestAppLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	c := newConsole(t, env)

	r := c.do(
		t,
		"POST",
		"/openapi/v1/apps",
		map[string]any{
			"workspaceId": c.ID,
			"name":        " Sync ",
			"description": "mirrors tasks",
			"scopes":      []string{"tasks:read", "projects:read"},
		},
	)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	clientID, secret := r.Str("clientId"), r.Str("secret")
	if !clientIDFormat.MatchString(clientID) || !strings.HasPrefix(secret, "pm_sec_") ||
		r.Str("secretPrefix") != secret[:12] {
		t.Fatalf("create returned clientId %q secret %q prefix %q", clientID, secret, r.Str("secretPrefix"))
	}
	if r.Str("name") != "Sync" || r.Str("status") != "ACTIVE" {
		t.Errorf("create: %s", r.Raw)
	}

	t.Run("detail and list never show the secret", func(t *testing.T) {
		for _, path := range []string{"/openapi/v1/apps/" + clientID, "/openapi/v1/apps"} {
			got := c.do(t, "GET", path, nil)
			if got.Status != 200 || !strings.Contains(string(got.Raw), clientID) {
				t.Fatalf("%s: %d %s", path, got.Status, got.Raw)
			}
			if strings.Contains(string(got.Raw), secret) || strings.Contains(string(got.Raw), `"secret"`) {
				t.Errorf("%s shows the secret: %s", path, got.Raw)
			}
		}
	})
	t.Run("patch name and clear description", func(t *testing.T) {
		got := c.do(t, "PATCH", "/openapi/v1/apps/"+clientID, map[string]any{"name": "Sync 2", "description": nil})
		if got.Status != 200 || got.Str("name") != "Sync 2" || got.Data()["description"] != nil {
			t.Fatalf("%d %s", got.Status, got.Raw)
		}
		kept := c.do(t, "PATCH", "/openapi/v1/apps/"+clientID, map[string]any{"name": "Sync 3"})
		if kept.Str("name") != "Sync 3" || kept.Data()["scopes"] == nil {
			t.Fatalf("%s", kept.Raw)
		}
	})
	t.Run("scopes replaced; unknown ones refused", func(t *testing.T) {
		got := c.do(t, "PATCH", "/openapi/v1/apps/"+clientID+"/scopes", map[string]any{"scopes": []string{"risks:write"}})
		if got.Status != 200 || strings.Join(apitest.Strings(got.Data()["scopes"]), ",") != "risks:write" {
			t.Fatalf("%d %s", got.Status, got.Raw)
		}
		bad := c.do(t, "PATCH", "/openapi/v1/apps/"+clientID+"/scopes", map[string]any{"scopes": []string{"risks:delete"}})
		apitest.WantError(t, bad, 400, "VALIDATION_FAILED")
	})
	t.Run("rotate secret", func(t *testing.T) {
		got := c.do(t, "POST", "/openapi/v1/apps/"+clientID+"/secret/rotate", nil)
		if got.Status != 201 || got.Str("secret") == secret || !strings.HasPrefix(got.Str("secret"), "pm_sec_") {
			t.Fatalf("%d %s", got.Status, got.Raw)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		apitest.WantError(
			t,
			c.do(t, "POST", "/openapi/v1/apps", map[string]any{"workspaceId": c.ID, "name": "", "scopes": []string{}}),
			400,
			"VALIDATION_FAILED",
		)
		apitest.WantError(
			t,
			c.do(
				t,
				"POST",
				"/openapi/v1/apps",
				map[string]any{"workspaceId": c.ID, "name": "x", "scopes": []string{"nope:read"}},
			),
			400,
			"VALIDATION_FAILED",
		)
		apitest.WantError(
			t,
			c.do(t, "POST", "/openapi/v1/apps", map[string]any{"workspaceId": c.ID, "name": "x"}),
			400,
			"VALIDATION_FAILED",
		)
		apitest.WantError(
			t,
			c.do(t, "PATCH", "/openapi/v1/apps/"+clientID, map[string]any{"status": "PAUSED"}),
			400,
			"VALIDATION_FAILED",
		)
	})
}

func TestAppsOfAnotherWorkspaceAreNotFound(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	a, b := newConsole(t, env), newConsole(t, env)
	appA := a.createApp(t, "tasks:read")
	keyA := a.createKey(t, appA, map[string]any{"scopes": []string{"tasks:read"}})

	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/openapi/v1/apps/" + appA.ClientID, nil},
		{"PATCH", "/openapi/v1/apps/" + appA.ClientID, map[string]any{"name": "mine now"}},
		{"PATCH", "/openapi/v1/apps/" + appA.ClientID + "/scopes", map[string]any{"scopes": []string{}}},
		{"DELETE", "/openapi/v1/apps/" + appA.ClientID, nil},
		{"POST", "/openapi/v1/apps/" + appA.ClientID + "/secret/rotate", nil},
		{"POST", "/openapi/v1/apps/" + appA.ClientID + "/keys", map[string]any{"scopes": []string{"tasks:read"}}},
		{"GET", "/openapi/v1/apps/" + appA.ClientID + "/keys", nil},
		{"DELETE", "/openapi/v1/apps/" + appA.ClientID + "/keys/" + keyA.ID, nil},
		{"POST", "/openapi/v1/apps/" + appA.ClientID + "/keys/" + keyA.ID + "/regenerate", nil},
		{"PATCH", "/openapi/v1/apps/" + appA.ClientID + "/keys/" + keyA.ID + "/name", map[string]any{"name": "x"}},
		{"POST", "/openapi/v1/apps/" + appA.ClientID + "/keys/" + keyA.ID + "/renew", nil},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := b.do(t, tc.method, tc.path, tc.body)
			apitest.WantError(t, r, 404, "NOT_FOUND")
			if strings.Contains(string(r.Raw), appA.ClientID[7:]) && tc.method == "GET" &&
				strings.Contains(string(r.Raw), "tasks:read") {
				t.Errorf("404 leaks the app: %s", r.Raw)
			}
		})
	}
	t.Run("B's list does not show A's app", func(t *testing.T) {
		r := b.do(t, "GET", "/openapi/v1/apps", nil)
		if strings.Contains(string(r.Raw), appA.ClientID) {
			t.Fatalf("B lists A's app: %s", r.Raw)
		}
	})
	t.Run("creating an app in A's workspace with B's session", func(t *testing.T) {
		r := b.do(
			t,
			"POST",
			"/openapi/v1/apps",
			map[string]any{"workspaceId": a.ID, "name": "intruder", "scopes": []string{}},
		)
		apitest.WantError(t, r, 404, "NOT_FOUND")
		// A workspace that does not exist answers the same.
		r = b.do(
			t,
			"POST",
			"/openapi/v1/apps",
			map[string]any{"workspaceId": "0193a6c4-0000-7000-8000-000000000000", "name": "intruder", "scopes": []string{}},
		)
		apitest.WantError(t, r, 404, "NOT_FOUND")
	})
	t.Run("A's key still works after all of B's attempts", func(t *testing.T) {
		if r := me(t, env, appA.ClientID, keyA.Value); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

func TestDeleteAppRemovesOrDisables(t *testing.T) {
	t.Parallel()
	// Loopback webhook URLs are allowed so that a subscription can be created;
	// nothing is ever delivered (no workers run).
	env := apitest.New(t, func(d *apitest.Config) { d.WebhookAllowLoopback = true })
	c := newConsole(t, env)

	t.Run("no active keys: removed", func(t *testing.T) {
		a := c.createApp(t, "tasks:read")
		k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
		c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID, nil)
		r := c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID, nil)
		if r.Status != 200 || r.Data()["deleted"] != true || r.Str("status") != "DELETED" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		apitest.WantError(t, c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID, nil), 404, "NOT_FOUND")
		// Its revoked key is kept for audit but can never authenticate.
		apitest.WantError(t, me(t, env, a.ClientID, k.Value), 401, "INVALID_TOKEN")
	})
	t.Run("active key: disabled, and its keys get 403", func(t *testing.T) {
		a := c.createApp(t, "tasks:read")
		k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
		if r := me(t, env, a.ClientID, k.Value); r.Status != 200 {
			t.Fatalf("before delete: %d %s", r.Status, r.Raw)
		}
		r := c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID, nil)
		if r.Status != 200 || r.Data()["deleted"] != false || r.Str("status") != "DISABLED" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		got := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID, nil)
		if got.Str("status") != "DISABLED" || got.Data()["disabledAt"] == nil {
			t.Errorf("after disable: %s", got.Raw)
		}
		apitest.WantError(t, me(t, env, a.ClientID, k.Value), 403, "APP_DISABLED")
		// Re-enabling restores the key.
		c.do(t, "PATCH", "/openapi/v1/apps/"+a.ClientID, map[string]any{"status": "ACTIVE"})
		if r := me(t, env, a.ClientID, k.Value); r.Status != 200 {
			t.Errorf("after re-enable: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("active webhook and no key: disabled; removed once the webhook is deleted", func(t *testing.T) {
		a := c.createApp(t, "tasks:read")
		hook := c.do(
			t,
			"POST",
			"/openapi/v1/apps/"+a.ClientID+"/webhooks",
			map[string]any{"url": "https://127.0.0.1:9/hook", "events": []string{"task.created"}},
		)
		if hook.Status != 201 {
			t.Fatalf("subscribe: %d %s", hook.Status, hook.Raw)
		}
		r := c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID, nil)
		if r.Status != 200 || r.Data()["deleted"] != false || r.Str("status") != "DISABLED" {
			t.Fatalf("delete with an active webhook: %d %s", r.Status, r.Raw)
		}
		if got := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID, nil); got.Str("status") != "DISABLED" {
			t.Fatalf("after disable: %s", got.Raw)
		}
		if del := c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID+"/webhooks/"+hook.Str("id"), nil); del.Status != 200 {
			t.Fatalf("delete webhook: %d %s", del.Status, del.Raw)
		}
		r = c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID, nil)
		if r.Status != 200 || r.Data()["deleted"] != true || r.Str("status") != "DELETED" {
			t.Fatalf("delete with only a disabled webhook: %d %s", r.Status, r.Raw)
		}
		apitest.WantError(t, c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID, nil), 404, "NOT_FOUND")
	})
}
