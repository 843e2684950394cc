package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestOAuthClientAuthentication(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	app := tn.Console(
		t,
		"POST",
		"/openapi/v1/apps",
		map[string]any{"workspaceId": tn.WorkspaceID, "name": "Confidential", "scopes": []string{"tasks:read"}},
	)
	if app.Status != 201 {
		t.Fatalf("app: %d %s", app.Status, app.Raw)
	}
	id, secret := app.Str("clientId"), app.Str("secret")
	path := "/openapi/v1/oauth/device/code"
	if s, h, b := post(t, env, path, url.Values{}, id, secret); s != 200 || b["device_code"] == nil ||
		h.Get("Cache-Control") != "no-store" {
		t.Errorf("HTTP Basic with the right secret: %d %v", s, b)
	}
	if s, _, b := post(t, env, path, url.Values{"client_id": {id}, "client_secret": {secret}}); s != 200 ||
		b["scope"] != nil && b["scope"] != "tasks:read" {
		t.Errorf("secret in the body: %d %v", s, b)
	}
	// A wrong secret in the body is 400 (no header was used, so no challenge).
	if s, h, b := post(t, env, path, url.Values{"client_id": {id}, "client_secret": {"pm_sec_wrong"}}); s != 400 ||
		b["error"] != "invalid_client" ||
		h.Get("WWW-Authenticate") != "" {
		t.Errorf("wrong secret in the body: %d %v", s, b)
	}
	// The workspace's console client is not an OAuth client.
	if s, _, b := post(t, env, path, url.Values{"client_id": {tn.ConsoleID}}); s != 400 || b["error"] != "invalid_client" {
		t.Errorf("console client: %d %v", s, b)
	}
	// JSON bodies are accepted too.
	r := env.Do(
		t,
		apitest.Request{Method: "POST", Path: path, Body: map[string]any{"client_id": id, "scope": "tasks:read"}},
	)
	if r.Status != 200 || r.Body["user_code"] == nil {
		t.Errorf("JSON body: %d %s", r.Status, r.Raw)
	}
	// The token endpoint's missing parameters are invalid_request.
	if s, _, b := post(t, env, "/openapi/v1/oauth/token", url.Values{"client_id": {id}}); s != 400 ||
		b["error"] != "invalid_request" {
		t.Errorf("no grant_type: %d %v", s, b)
	}
	if s, _, b := post(t, env, "/openapi/v1/oauth/token",
		url.Values{"client_id": {id}, "grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}}); s != 400 ||
		b["error"] != "invalid_request" {
		t.Errorf("no device_code: %d %v", s, b)
	}
	// The token endpoint authenticates the client as the device endpoint does.
	grant := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {"pmd_x"}}
	grant.Set("client_id", "pm_cli_00000000000000000000")
	if s, _, b := post(t, env, "/openapi/v1/oauth/token", grant); s != 400 || b["error"] != "invalid_client" {
		t.Errorf("token with an unknown client: %d %v", s, b)
	}
	grant.Del("client_id")
	if s, h, b := post(t, env, "/openapi/v1/oauth/token", grant, id, "pm_sec_wrong"); s != 401 ||
		b["error"] != "invalid_client" ||
		h.Get("WWW-Authenticate") == "" {
		t.Errorf("token with a wrong Basic secret: %d %v", s, b)
	}

	// Metadata and JWKS are public and name each other.
	meta := env.Do(t, apitest.Request{Method: "GET", Path: "/.well-known/oauth-authorization-server"})
	if meta.Status != 200 || !strings.HasSuffix(meta.Body["jwks_uri"].(string), "/openapi/v1/oauth/jwks.json") ||
		meta.Body["issuer"] == "" {
		t.Errorf("metadata: %d %s", meta.Status, meta.Raw)
	}
	if jwks := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/jwks.json"}); jwks.Status != 200 ||
		len(jwks.Body["keys"].([]any)) == 0 {
		t.Errorf("jwks: %d %s", jwks.Status, jwks.Raw)
	}
}

// The OAuth endpoints read form or JSON bodies of their own (not the envelope's
// decoder); no body may reach a 5xx.
func FuzzOAuthToken(f *testing.F) {
	seeds := append([]string{
		`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"pmd_x","client_id":"$ID"}`,
		`{"grant_type":"refresh_token","refresh_token":"pmr_x","client_id":"$ID","scope":"tasks:read"}`,
		`{"grant_type":"refresh_token","refresh_token":"pmr_x","client_id":"$ID","scope":"nonsense:x"}`,
		`{"grant_type":"password","client_id":"$ID","client_secret":"pm_sec_x"}`,
		`{"grant_type":7,"client_id":["$ID"]}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(
		f,
		"POST",
		"/openapi/v1/oauth/token",
		seeds,
		func(t testing.TB, tn *apitest.Tenant) string { return tn.ClientID },
	)
}

func FuzzOAuthDeviceCode(f *testing.F) {
	seeds := append([]string{
		`{"client_id":"$ID"}`, `{"client_id":"$ID","scope":"tasks:read projects:read"}`, `{"client_id":"$ID","scope":"   "}`,
		`{"client_id":"$ID","client_secret":""}`, `{"client_id":"pm_cli_\u0000"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(
		f,
		"POST",
		"/openapi/v1/oauth/device/code",
		seeds,
		func(t testing.TB, tn *apitest.Tenant) string { return tn.ClientID },
	)
}
