package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/api/idempotency"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestSecretsAppearOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := newConsole(t, env)
	a := c.createApp(t, "tasks:read", "projects:read")
	k := c.createKey(t, a, map[string]any{"name": "ci", "scopes": []string{"tasks:read"}})
	if !strings.HasPrefix(k.Value, "pmk_") || len(k.Value) != 42 {
		t.Fatalf("key value %q", k.Value)
	}
	// Use every credential, then read everything back.
	me(t, env, a.ClientID, k.Value)
	var later []string
	app := "/openapi/v1/apps/" + a.ClientID
	for _, p := range []string{"/openapi/v1/apps", app, app + "/keys"} {
		later = append(later, string(c.do(t, "GET", p, nil).Raw))
	}
	later = append(
		later,
		string(c.do(t, "PATCH", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/name", map[string]any{"name": "ci2"}).Raw),
	)
	later = append(later, string(me(t, env, a.ClientID, k.Value).Raw))
	for _, body := range later {
		for _, secret := range []string{a.Secret, k.Value, c.SID} {
			if strings.Contains(body, secret) {
				t.Errorf("a later response carries a secret (%s...): %s", secret[:8], body)
			}
		}
	}
	logs := env.Logs.String()
	if logs == "" {
		t.Fatal("no log output captured")
	}
	for _, secret := range []string{a.Secret, k.Value, c.SID, env.AdminToken} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log carries a secret (%s...)", secret[:8])
		}
	}
	list := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	item := list.Data()["items"].([]any)[0].(map[string]any)
	if item["prefix"] != k.Value[:13] || item["lastFour"] != k.Value[len(k.Value)-4:] || item["name"] != "ci2" ||
		item["apiKey"] != nil {
		t.Errorf("listed key: %v", item)
	}
}

func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	env, c, a := consoleWithApp(t, "tasks:read")
	other := c.createApp(t, "tasks:read")
	good := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	revoked := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID+"/keys/"+revoked.ID, nil)
	expiring := c.createKey(
		t,
		a,
		map[string]any{
			"scopes":    []string{"tasks:read"},
			"expiresAt": time.Now().Add(1500 * time.Millisecond).Format(time.RFC3339Nano),
		},
	)
	disabledApp := c.createApp(t, "tasks:read")
	disabledKey := c.createKey(t, disabledApp, map[string]any{"scopes": []string{"tasks:read"}})
	c.do(t, "PATCH", "/openapi/v1/apps/"+disabledApp.ClientID, map[string]any{"status": "DISABLED"})
	suspended := newConsole(t, env)
	sApp := suspended.createApp(t, "tasks:read")
	sKey := suspended.createKey(t, sApp, map[string]any{"scopes": []string{"tasks:read"}})
	env.Do(
		t,
		apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + suspended.ID + "/suspend", Header: env.Admin()},
	)
	forged := "pmk_" + strings.Repeat("A", 32) + "AAAAAA"
	time.Sleep(1600 * time.Millisecond) // let the expiring key expire

	cases := []struct {
		name, clientID, auth string
		status               int
		code                 string
	}{
		{"missing Authorization", a.ClientID, "", 401, "UNAUTHENTICATED"},
		{"missing X-Client-ID", "", good.Value, 401, "UNAUTHENTICATED"},
		{"malformed key", a.ClientID, "not-a-key", 401, "INVALID_TOKEN"},
		{"checksum mismatch", a.ClientID, forged, 401, "INVALID_TOKEN"},
		{"unknown key with a valid checksum", a.ClientID, validLookingKey(), 401, "INVALID_TOKEN"},
		{"revoked key", a.ClientID, revoked.Value, 401, "INVALID_TOKEN"},
		{"key of another app", other.ClientID, good.Value, 401, "INVALID_TOKEN"},
		{"unknown client id", "pm_cli_00000000000000000000", good.Value, 401, "INVALID_TOKEN"},
		{"expired key", a.ClientID, expiring.Value, 401, "TOKEN_EXPIRED"},
		{"disabled app", disabledApp.ClientID, disabledKey.Value, 403, "APP_DISABLED"},
		{"suspended workspace", sApp.ClientID, sKey.Value, 403, "WORKSPACE_SUSPENDED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apitest.WantError(t, me(t, env, tc.clientID, tc.auth), tc.status, tc.code)
		})
	}
	t.Run("good key", func(t *testing.T) {
		r := me(t, env, a.ClientID, good.Value)
		if r.Status != 200 || r.Str("keyId") != good.ID || r.Str("workspaceId") != c.ID {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

// validLookingKey has a correct checksum but was never issued.
func validLookingKey() string {
	return authzNewKey()
}

func TestKeyScopesMustBeASubsetOfTheApps(t *testing.T) {
	t.Parallel()
	_, c, a := consoleWithApp(t, "tasks:read")
	r := c.do(
		t,
		"POST",
		"/openapi/v1/apps/"+a.ClientID+"/keys",
		map[string]any{"scopes": []string{"tasks:read", "tasks:write"}},
	)
	apitest.WantError(t, r, 400, "SCOPE_NOT_ALLOWED")
	if got := strings.Join(apitest.Strings(r.Body["error"].(map[string]any)["details"].(map[string]any)["notAllowed"]),
		","); got != "tasks:write" {
		t.Errorf("details.notAllowed = %s", got)
	}
	list := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	if n := len(list.Data()["items"].([]any)); n != 0 {
		t.Errorf("a refused key was created anyway: %d keys", n)
	}
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys",
		map[string]any{"scopes": []string{"tasks:fly"}}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys",
		map[string]any{"scopes": []string{}, "expiresAt": "yesterday"}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys",
		map[string]any{"scopes": []string{}, "expiresAt": "2001-01-01T00:00:00Z"}), 400, "VALIDATION_FAILED")
}

func TestEffectiveScopesFollowTheApp(t *testing.T) {
	t.Parallel()
	env, c, a := consoleWithApp(t, "tasks:read", "projects:read")
	k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read", "projects:read"}})
	if got := strings.Join(apitest.Strings(me(t, env, a.ClientID, k.Value).Data()["scopes"]),
		","); got != "projects:read,tasks:read" {
		t.Fatalf("scopes %s", got)
	}
	c.do(t, "PATCH", "/openapi/v1/apps/"+a.ClientID+"/scopes", map[string]any{"scopes": []string{"projects:read"}})
	if got := strings.Join(apitest.Strings(me(t, env, a.ClientID, k.Value).Data()["scopes"]),
		","); got != "projects:read" {
		t.Fatalf("after narrowing the app, effective scopes are %s", got)
	}
}

func TestRevocationIsImmediateOnBothInstances(t *testing.T) {
	t.Parallel()
	one := apitest.New(t)
	two := apitest.New(t) // a second server instance on the same database
	c := newConsole(t, one)
	a := c.createApp(t, "tasks:read")
	k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	// Both instances have the key cached.
	for _, env := range []*apitest.Env{one, two} {
		if r := me(t, env, a.ClientID, k.Value); r.Status != 200 {
			t.Fatalf("before revoke: %d %s", r.Status, r.Raw)
		}
	}
	revokedAt := time.Now()
	r := c.do(t, "DELETE", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID, nil)
	if r.Status != 200 || r.Data()["revokedAt"] == nil || r.Str("status") != "REVOKED" {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	apitest.WantError(t, me(t, one, a.ClientID, k.Value), 401, "INVALID_TOKEN")
	for {
		got := me(t, two, a.ClientID, k.Value)
		if got.Status == 401 && got.ErrorCode() == "INVALID_TOKEN" {
			t.Logf("second instance refused the key %v after revocation", time.Since(revokedAt).Round(time.Millisecond))
			break
		}
		if time.Since(revokedAt) > time.Second {
			t.Fatalf("second instance still accepts a revoked key after 1s: %d", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The record stays, revoked.
	list := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	if !strings.Contains(string(list.Raw), `"REVOKED"`) {
		t.Errorf("revoked key not listed: %s", list.Raw)
	}
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/renew", nil), 409, "CONFLICT")
}

func TestRegenerate(t *testing.T) {
	t.Parallel()
	env, c, a := consoleWithApp(t, "tasks:read")

	t.Run("without grace the old value stops at once", func(t *testing.T) {
		k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
		me(t, env, a.ClientID, k.Value) // cached
		r := c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/regenerate", nil)
		if r.Status != 201 || r.Str("id") != k.ID || r.Str("apiKey") == k.Value || r.Data()["previousValidUntil"] != nil {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		apitest.WantError(t, me(t, env, a.ClientID, k.Value), 401, "INVALID_TOKEN")
		if got := me(t, env, a.ClientID, r.Str("apiKey")); got.Status != 200 || got.Str("keyId") != k.ID {
			t.Fatalf("new value: %d %s", got.Status, got.Raw)
		}
	})
	t.Run("with grace both values work until it ends", func(t *testing.T) {
		k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
		r := c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/regenerate", map[string]any{"graceSeconds": 2})
		if r.Status != 201 || r.Data()["previousValidUntil"] == nil {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		if got := me(t, env, a.ClientID, k.Value); got.Status != 200 {
			t.Fatalf("old value inside grace: %d %s", got.Status, got.Raw)
		}
		if got := me(t, env, a.ClientID, r.Str("apiKey")); got.Status != 200 {
			t.Fatalf("new value: %d %s", got.Status, got.Raw)
		}
		time.Sleep(2100 * time.Millisecond)
		apitest.WantError(t, me(t, env, a.ClientID, k.Value), 401, "INVALID_TOKEN")
		if got := me(t, env, a.ClientID, r.Str("apiKey")); got.Status != 200 {
			t.Fatalf("new value after grace: %d", got.Status)
		}
	})
	t.Run("grace above a day is refused", func(t *testing.T) {
		k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
		apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/regenerate",
			map[string]any{"graceSeconds": 86401}), 400, "VALIDATION_FAILED")
		if got := me(t, env, a.ClientID, k.Value); got.Status != 200 {
			t.Fatalf("a refused regenerate changed the key: %d", got.Status)
		}
	})
}

func TestRenewAndExpiry(t *testing.T) {
	t.Parallel()
	env, c, a := consoleWithApp(t, "tasks:read")
	k := c.createKey(
		t,
		a,
		map[string]any{"scopes": []string{"tasks:read"}, "expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339)},
	)

	r := c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/renew", nil)
	exp, _ := time.Parse(time.RFC3339, r.Str("expiresAt"))
	if r.Status != 201 || time.Until(exp) < 89*24*time.Hour || time.Until(exp) > 91*24*time.Hour {
		t.Fatalf("default renew: %d %s", r.Status, r.Raw)
	}
	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	r = c.do(
		t,
		"POST",
		"/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/renew",
		map[string]any{"expiresAt": at.Format(time.RFC3339)},
	)
	if got, _ := time.Parse(time.RFC3339, r.Str("expiresAt")); !got.Equal(at) {
		t.Fatalf("explicit renew: %s", r.Raw)
	}
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+k.ID+"/renew",
		map[string]any{"expiresAt": "2000-01-01T00:00:00Z"}), 400, "VALIDATION_FAILED")

	// A key that expired comes back when renewed.
	short := c.createKey(
		t,
		a,
		map[string]any{"scopes": []string{"tasks:read"}, "expiresAt": time.Now().Add(time.Second).Format(time.RFC3339Nano)},
	)
	time.Sleep(1100 * time.Millisecond)
	apitest.WantError(t, me(t, env, a.ClientID, short.Value), 401, "TOKEN_EXPIRED")
	c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+short.ID+"/renew", nil)
	if got := me(t, env, a.ClientID, short.Value); got.Status != 200 {
		t.Fatalf("renewed key: %d %s", got.Status, got.Raw)
	}
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/key_00000000000000000000000000/renew",
		nil), 404, "NOT_FOUND")
	apitest.WantError(t, c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/nonsense/renew", nil), 404, "NOT_FOUND")
}

func TestLastUsedAtIsFlushedInBatches(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := newConsole(t, env)
	a := c.createApp(t, "tasks:read")
	k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	for i := 0; i < 5; i++ {
		me(t, env, a.ClientID, k.Value)
	}
	list := c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	if list.Data()["items"].([]any)[0].(map[string]any)["lastUsedAt"] != nil {
		t.Fatal("lastUsedAt was written per request; it must wait for the batch")
	}
	if err := env.Auth.FlushLastUsed(context.Background()); err != nil {
		t.Fatal(err)
	}
	list = c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	first := list.Data()["items"].([]any)[0].(map[string]any)["lastUsedAt"]
	if first == nil {
		t.Fatalf("lastUsedAt not set after the flush: %s", list.Raw)
	}
	// Within the minute, further uses and flushes write nothing for this key.
	time.Sleep(10 * time.Millisecond)
	for i := 0; i < 3; i++ {
		me(t, env, a.ClientID, k.Value)
	}
	if err := env.Auth.FlushLastUsed(context.Background()); err != nil {
		t.Fatal(err)
	}
	list = c.do(t, "GET", "/openapi/v1/apps/"+a.ClientID+"/keys", nil)
	if again := list.Data()["items"].([]any)[0].(map[string]any)["lastUsedAt"]; again != first {
		t.Errorf("lastUsedAt written twice within a minute: %v then %v", first, again)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(d *apitest.Config) { d.RateLimitPerMinute = 1000 })
	c := newConsole(t, env)
	a := c.createApp(t, "tasks:read")
	k := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	r := me(t, env, a.ClientID, k.Value)
	if r.Header.Get("X-RateLimit-Limit") != "1000" || r.Header.Get("RateLimit-Policy") != `"default";q=1000;w=60` ||
		r.Header.Get("RateLimit") == "" {
		t.Fatalf("headers with the default: %v", r.Header)
	}
	// The operator's override of the app's limit.
	setLimit := func(body map[string]any) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "PUT",
			Path:   "/admin/v1/workspaces/" + c.ID + "/apps/" + a.ClientID + "/rate-limit",
			Header: env.Admin(), Body: body})
	}
	set := setLimit(map[string]any{"rateLimitPerMinute": 2})
	if set.Status != 200 || set.Data()["rateLimitPerMinute"] != float64(2) {
		t.Fatalf("override: %d %s", set.Status, set.Raw)
	}
	first := me(t, env, a.ClientID, k.Value)
	if first.Status != 200 || first.Header.Get("X-RateLimit-Limit") != "2" ||
		first.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("first under the override: %d %v", first.Status, first.Header)
	}
	me(t, env, a.ClientID, k.Value)
	third := me(t, env, a.ClientID, k.Value)
	apitest.WantError(t, third, 429, "RATE_LIMITED")
	if third.Header.Get("Retry-After") == "" || third.Header.Get("X-RateLimit-Remaining") != "0" ||
		!strings.Contains(third.Header.Get("RateLimit"), "r=0") {
		t.Errorf("429 headers: %v", third.Header)
	}
	// perMinute, the body's name in 0.1.0, is still taken; the two names
	// disagreeing are refused.
	old := setLimit(map[string]any{"perMinute": 3})
	if old.Status != 200 || old.Data()["rateLimitPerMinute"] != float64(3) {
		t.Errorf("the deprecated name: %d %s", old.Status, old.Raw)
	}
	apitest.WantError(t, setLimit(map[string]any{"perMinute": 3, "rateLimitPerMinute": 4}), 400, "VALIDATION_FAILED")
	// Another key is not affected by this one's bucket.
	other := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	if got := me(t, env, a.ClientID, other.Value); got.Status != 200 {
		t.Errorf("another key: %d", got.Status)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	c := newConsole(t, env)
	body := map[string]any{"workspaceId": c.ID, "name": "once", "scopes": []string{"tasks:read"}}
	send := func(b any, key string) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/apps", Body: b,
			Header:  map[string]string{"X-Client-ID": c.ConsoleClientID, "Idempotency-Key": key},
			Cookies: map[string]string{"sid": c.SID}})
	}
	first := send(body, "create-app-1")
	if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	// The app's secret is shown once: the replay names the app, without it.
	again := send(body, "create-app-1")
	apitest.WantError(t, again, 409, "CONFLICT")
	if again.Header.Get("Idempotent-Replayed") != "true" || again.ErrorDetails()["id"] != first.Str("clientId") ||
		strings.Contains(string(again.Raw), first.Str("secret")) {
		t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Raw)
	}
	list := c.do(t, "GET", "/openapi/v1/apps", nil)
	if n := len(list.Data()["items"].([]any)); n != 1 {
		t.Errorf("%d apps after a replayed create, want 1", n)
	}
	apitest.WantError(t, send(map[string]any{"workspaceId": c.ID, "name": "other", "scopes": []string{}},
		"create-app-1"), 422, "IDEMPOTENCY_KEY_REUSED")
	// A failed validation is remembered too, as Stripe does.
	bad := map[string]any{"workspaceId": c.ID, "name": "", "scopes": []string{}}
	apitest.WantError(t, send(bad, "bad-1"), 400, "VALIDATION_FAILED")
	if r := send(bad, "bad-1"); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed 400 lacks the header")
	}
	apitest.WantError(t, send(body, strings.Repeat("x", 256)), 400, "VALIDATION_FAILED")

	// A first request still running (its record claimed, not finished): 409.
	res, err := env.Directory.Resolve(context.Background(), c.ConsoleClientID)
	if err != nil {
		t.Fatal(err)
	}
	scope := idempotency.Scope{Shard: res.Shard, Workspace: res.Workspace.ID, ClientID: c.ConsoleClientID}
	running := map[string]any{"workspaceId": c.ID, "name": "slow", "scopes": []string{}}
	raw, _ := json.Marshal(running)
	h := sha256.Sum256(append([]byte("POST /openapi/v1/apps\n"), raw...))
	if outcome, _, err := idempotency.Begin(context.Background(), scope, "in-flight-1", h[:]); err != nil ||
		outcome != idempotency.Proceed {
		t.Fatalf("claim: %v %v", outcome, err)
	}
	apitest.WantError(t, send(running, "in-flight-1"), 409, "CONFLICT")
}
