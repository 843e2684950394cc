package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestDeviceVerificationURISendsToTheConsole: the verification URI a device
// prints (and the earlier page's form) sends the browser to the console's
// approval page with the code, and only the code.
func TestDeviceVerificationURISendsToTheConsole(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	dc := deviceCode(t, env, tn.ClientID)
	code := dc["user_code"].(string)
	complete, _ := url.Parse(dc["verification_uri_complete"].(string))
	cases := []struct {
		name string
		req  apitest.Request
		want string
	}{
		{
			"the complete URI",
			apitest.Request{Method: "GET", Path: complete.RequestURI()},
			"/console/device?user_code=" + code,
		},
		{"a code typed in any case",
			apitest.Request{
				Method: "GET",
				Path:   "/openapi/v1/oauth/device?user_code=" + url.QueryEscape(strings.ToLower(code)),
			},
			"/console/device?user_code=" + code},
		{"no code", apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device"}, "/console/device"},
		{"script in the code", apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device?user_code=%3Cscript%3E"},
			"/console/device"},
		{"the earlier page's form", apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device",
			Body:   "user_code=" + code + "&action=approve",
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
			"/console/device?user_code=" + code},
	}
	for _, c := range cases {
		r := env.Do(t, c.req)
		if r.Status != 303 || r.Header.Get("Location") != c.want {
			t.Errorf("%s: %d Location %q, want 303 %q", c.name, r.Status, r.Header.Get("Location"), c.want)
		}
	}
	// Nothing was decided by the redirects.
	if s, b := poll(t, env, tn.ClientID, dc["device_code"].(string)); s != 400 ||
		b["error"] != "authorization_pending" {
		t.Fatalf("after the redirects: %d %v", s, b)
	}
}

// TestDevicePending: the console reads which app asks for what before the
// session decides (RFC 8628 section 5.4); another workspace's code, an unknown
// one and a decided one are the same 404, and wrong codes are limited per user.
func TestDevicePending(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	other := env.NewTenant(t)
	dc := deviceCode(t, env, tn.ClientID)
	code := dc["user_code"].(string)
	pending := func(who *apitest.Tenant, code string) *apitest.Response {
		return who.Console(t, "GET", "/openapi/v1/oauth/device/pending?user_code="+url.QueryEscape(code), nil)
	}
	r := pending(tn, strings.ToLower(strings.ReplaceAll(code, "-", " ")))
	if r.Status != 200 || r.Str("userCode") != code || r.Str("clientId") != tn.ClientID ||
		r.Str("appName") != "test app" {
		t.Fatalf("pending: %d %s", r.Status, r.Raw)
	}
	if !strings.Contains(string(r.Raw), `"name":"action-items:write","description":"create and change action items"`) {
		t.Errorf("the scopes are not described: %s", r.Raw)
	}
	if r := pending(other, code); r.Status != 404 || r.ErrorCode() != "NOT_FOUND" {
		t.Errorf("another workspace's code: %d %s", r.Status, r.Raw)
	}
	if r := tn.Console(t, "GET", "/openapi/v1/oauth/device/pending", nil); r.Status != 400 {
		t.Errorf("no code: %d %s", r.Status, r.Raw)
	}
	approve(t, tn, code, "approve")
	if r := pending(tn, code); r.Status != 404 {
		t.Errorf("a decided code: %d %s", r.Status, r.Raw)
	}
	for i := range 5 {
		want := 404
		if i == 4 {
			want = 429 // the decided code counted: five misses
		}
		if r := pending(tn, "BCDF-GHJ"+string("KLMNP"[i])); r.Status != want {
			t.Errorf("wrong code %d: %d, want %d", i+1, r.Status, want)
		}
	}
}

// TestEndSession: sign-out ends the sid on the server at once; it is then
// refused everywhere, and ending it again is 401.
func TestEndSession(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	r := tn.Console(t, "DELETE", "/openapi/v1/session", nil)
	if r.Status != 200 || r.Data()["ended"] != true {
		t.Fatalf("sign-out: %d %s", r.Status, r.Raw)
	}
	for _, path := range []string{"/openapi/v1/session", "/openapi/v1/apps"} {
		if r := tn.Console(t, "GET", path, nil); r.Status != 401 || r.ErrorCode() != "INVALID_TOKEN" {
			t.Errorf("%s after sign-out: %d %s", path, r.Status, r.Raw)
		}
	}
	if r := tn.Console(t, "DELETE", "/openapi/v1/session", nil); r.Status != 401 {
		t.Errorf("signing out twice: %d %s", r.Status, r.Raw)
	}
}
