package api_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// openPage GETs the verification page and returns its CSRF token (the hidden
// field and the cookie must agree).
func openPage(t *testing.T, env *apitest.Env, query string) (string, *apitest.Response) {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device" + query})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", r.Status, r.Raw)
	}
	m := csrfField.FindSubmatch(r.Raw)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", r.Raw)
	}
	cookie := ""
	for _, c := range r.Header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(c, "pmapi_csrf="); ok {
			cookie, _, _ = strings.Cut(v, ";")
			if !strings.Contains(c, "SameSite=Strict") || !strings.Contains(c, "HttpOnly") {
				t.Errorf("CSRF cookie is not SameSite=Strict and HttpOnly: %s", c)
			}
		}
	}
	if cookie != string(m[1]) {
		t.Fatalf("CSRF cookie %q and field %q differ", cookie, m[1])
	}
	if r.Header.Get("Content-Security-Policy") == "" || r.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("the page can be framed or run scripts: %v", r.Header)
	}
	return cookie, r
}

// submit posts the page's form with the given CSRF field, cookies and action.
func submit(t *testing.T, env *apitest.Env, code, csrf, action string, cookies map[string]string) *apitest.Response {
	t.Helper()
	form := url.Values{"user_code": {code}, "csrf": {csrf}, "action": {action}}
	return env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device", Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Cookies: cookies})
}

func TestOAuthVerificationPage(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	other := env.NewTenant(t)
	dc := deviceCode(t, env, tn.ClientID)
	code := dc["user_code"].(string)

	// verification_uri_complete pre-fills the code and names the asking app.
	complete, _ := url.Parse(dc["verification_uri_complete"].(string))
	csrf, page := openPage(t, env, "?"+complete.RawQuery)
	if !strings.Contains(string(page.Raw), code) || !strings.Contains(string(page.Raw), "<code>projects:read</code>") {
		t.Errorf("the page does not show the code and the scopes asked for:\n%s", page.Raw)
	}

	signedIn := map[string]string{"pmapi_csrf": csrf, "sid": tn.SID}
	t.Run("403 without the CSRF cookie", func(t *testing.T) {
		if r := submit(t, env, code, csrf, "approve", map[string]string{"sid": tn.SID}); r.Status != 403 {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("403 with a forged CSRF field", func(t *testing.T) {
		if r := submit(t, env, code, "forged", "approve", signedIn); r.Status != 403 {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("401 when not signed in", func(t *testing.T) {
		if r := submit(t, env, code, csrf, "approve", map[string]string{"pmapi_csrf": csrf}); r.Status != 401 {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("401 signed in to another workspace", func(t *testing.T) {
		if r := submit(t, env, code, csrf, "approve", map[string]string{"pmapi_csrf": csrf, "sid": other.SID}); r.Status != 401 {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("400 without an action", func(t *testing.T) {
		if r := submit(t, env, code, csrf, "", signedIn); r.Status != 400 {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("404 for an unknown code", func(t *testing.T) {
		if r := submit(t, env, "BCDF-GHJK", csrf, "approve", signedIn); r.Status != 404 || !strings.Contains(string(r.Raw), "No pending authorization") {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
	})
	// None of the refusals above decided anything: the device still waits.
	if s, b := poll(t, env, tn.ClientID, dc["device_code"].(string)); s != 400 || b["error"] != "authorization_pending" {
		t.Fatalf("after refused submissions: %d %v", s, b)
	}

	if r := submit(t, env, strings.ToLower(code), csrf, "approve", signedIn); r.Status != 200 || !strings.Contains(string(r.Raw), "connected") {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	time.Sleep(1100 * time.Millisecond) // the test interval
	if s, b := poll(t, env, tn.ClientID, dc["device_code"].(string)); s != 200 || b["access_token"] == nil {
		t.Fatalf("token after approval on the page: %d %v", s, b)
	}

	denied := deviceCode(t, env, tn.ClientID)
	if r := submit(t, env, denied["user_code"].(string), csrf, "deny", signedIn); r.Status != 200 || !strings.Contains(string(r.Raw), "Denied") {
		t.Fatalf("deny: %d %s", r.Status, r.Raw)
	}
	if _, b := poll(t, env, tn.ClientID, denied["device_code"].(string)); b["error"] != "access_denied" {
		t.Errorf("after deny on the page: %v", b)
	}
}

func TestOAuthClientAuthentication(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	app := tn.Console(t, "POST", "/openapi/v1/apps", map[string]any{"workspaceId": tn.WorkspaceID, "name": "Confidential", "scopes": []string{"tasks:read"}})
	if app.Status != 201 {
		t.Fatalf("app: %d %s", app.Status, app.Raw)
	}
	id, secret := app.Str("clientId"), app.Str("secret")
	path := "/openapi/v1/oauth/device/code"
	if s, h, b := post(t, env, path, url.Values{}, id, secret); s != 200 || b["device_code"] == nil || h.Get("Cache-Control") != "no-store" {
		t.Errorf("HTTP Basic with the right secret: %d %v", s, b)
	}
	if s, _, b := post(t, env, path, url.Values{"client_id": {id}, "client_secret": {secret}}); s != 200 || b["scope"] != nil && b["scope"] != "tasks:read" {
		t.Errorf("secret in the body: %d %v", s, b)
	}
	// A wrong secret in the body is 400 (no header was used, so no challenge).
	if s, h, b := post(t, env, path, url.Values{"client_id": {id}, "client_secret": {"pm_sec_wrong"}}); s != 400 || b["error"] != "invalid_client" || h.Get("WWW-Authenticate") != "" {
		t.Errorf("wrong secret in the body: %d %v", s, b)
	}
	// The workspace's console client is not an OAuth client.
	if s, _, b := post(t, env, path, url.Values{"client_id": {tn.ConsoleID}}); s != 400 || b["error"] != "invalid_client" {
		t.Errorf("console client: %d %v", s, b)
	}
	// JSON bodies are accepted too.
	r := env.Do(t, apitest.Request{Method: "POST", Path: path, Body: map[string]any{"client_id": id, "scope": "tasks:read"}})
	if r.Status != 200 || r.Body["user_code"] == nil {
		t.Errorf("JSON body: %d %s", r.Status, r.Raw)
	}
	// The token endpoint's missing parameters are invalid_request.
	if s, _, b := post(t, env, "/openapi/v1/oauth/token", url.Values{"client_id": {id}}); s != 400 || b["error"] != "invalid_request" {
		t.Errorf("no grant_type: %d %v", s, b)
	}
	if s, _, b := post(t, env, "/openapi/v1/oauth/token", url.Values{"client_id": {id}, "grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}}); s != 400 || b["error"] != "invalid_request" {
		t.Errorf("no device_code: %d %v", s, b)
	}
	// The token endpoint authenticates the client as the device endpoint does.
	grant := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {"pmd_x"}}
	grant.Set("client_id", "pm_cli_00000000000000000000")
	if s, _, b := post(t, env, "/openapi/v1/oauth/token", grant); s != 400 || b["error"] != "invalid_client" {
		t.Errorf("token with an unknown client: %d %v", s, b)
	}
	grant.Del("client_id")
	if s, h, b := post(t, env, "/openapi/v1/oauth/token", grant, id, "pm_sec_wrong"); s != 401 || b["error"] != "invalid_client" || h.Get("WWW-Authenticate") == "" {
		t.Errorf("token with a wrong Basic secret: %d %v", s, b)
	}

	// Metadata and JWKS are public and name each other.
	meta := env.Do(t, apitest.Request{Method: "GET", Path: "/.well-known/oauth-authorization-server"})
	if meta.Status != 200 || !strings.HasSuffix(meta.Body["jwks_uri"].(string), "/openapi/v1/oauth/jwks.json") || meta.Body["issuer"] == "" {
		t.Errorf("metadata: %d %s", meta.Status, meta.Raw)
	}
	if jwks := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/jwks.json"}); jwks.Status != 200 || len(jwks.Body["keys"].([]any)) == 0 {
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
	apitest.FuzzBody(f, "POST", "/openapi/v1/oauth/token", seeds, func(t testing.TB, tn *apitest.Tenant) string { return tn.ClientID })
}

func FuzzOAuthDeviceCode(f *testing.F) {
	seeds := append([]string{
		`{"client_id":"$ID"}`, `{"client_id":"$ID","scope":"tasks:read projects:read"}`, `{"client_id":"$ID","scope":"   "}`,
		`{"client_id":"$ID","client_secret":""}`, `{"client_id":"pm_cli_\u0000"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", "/openapi/v1/oauth/device/code", seeds, func(t testing.TB, tn *apitest.Tenant) string { return tn.ClientID })
}
