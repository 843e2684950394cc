package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestDevicePageSignInAndReview walks the page as a person with a code typed
// by hand: the code alone first, then the app (name and client id) and its
// scopes before any button decides (RFC 8628 section 5.4), a sign-in with the
// console session pmapi dev prints, then approval.
func TestDevicePageSignInAndReview(t *testing.T) {
	env, _, tn := oauthEnv(t, 30*time.Second)
	dc := deviceCode(t, env, tn.ClientID)
	code := dc["user_code"].(string)
	typed := strings.ToLower(strings.ReplaceAll(code, "-", " "))

	first := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device"})
	if first.Status != 200 || first.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(first.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("first step: %d %v", first.Status, first.Header)
	}
	if html := string(first.Raw); !strings.Contains(html, `method="get"`) || !strings.Contains(html, `name="user_code"`) || strings.Contains(html, `value="approve"`) {
		t.Errorf("the first step is not the code alone:\n%s", html)
	}

	csrf, page := openPage(t, env, "?"+url.Values{"user_code": {typed}}.Encode())
	html := string(page.Raw)
	for _, want := range []string{"test app", "client id <code>" + tn.ClientID + "</code>", "<code>projects:read</code>: read projects",
		"<code>action-items:write</code>: create and change action items", code, `value="signin"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the review lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, `value="approve"`) {
		t.Errorf("Approve offered before signing in:\n%s", html)
	}

	signIn := func(sid string) *apitest.Response {
		form := url.Values{"user_code": {typed}, "csrf": {csrf}, "action": {"signin"}, "sid": {sid}}
		return env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device", Body: form.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Cookies: map[string]string{"pmapi_csrf": csrf}})
	}
	other := env.NewTenant(t)
	for _, bad := range []string{"pms_wrong", other.SID} {
		if r := signIn(bad); r.Status != 401 || !strings.Contains(string(r.Raw), "not valid for this workspace") || r.Header.Get("Set-Cookie") != "" && strings.Contains(r.Header.Get("Set-Cookie"), "sid=") {
			t.Errorf("sign-in with a foreign session: %d %s", r.Status, r.Raw)
		}
	}
	r := signIn(tn.SID)
	if r.Status != 200 || !strings.Contains(string(r.Raw), `value="approve"`) || !strings.Contains(string(r.Raw), "Signed in as") {
		t.Fatalf("sign-in: %d %s", r.Status, r.Raw)
	}
	var cookie string
	for _, c := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sid=") {
			cookie = c
		}
	}
	for _, attr := range []string{"sid=" + tn.SID, "path=/openapi/v1/oauth/device", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("session cookie %q lacks %s", cookie, attr)
		}
	}
	if r.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("the signed-in page lost its protections: %v", r.Header)
	}

	// Signed in, the page offers the decision with the app still in view.
	again := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device?user_code=" + url.QueryEscape(code), Cookies: map[string]string{"sid": tn.SID}})
	if !strings.Contains(string(again.Raw), `value="approve"`) || !strings.Contains(string(again.Raw), tn.ClientID) {
		t.Errorf("signed-in review: %s", again.Raw)
	}
	done := submit(t, env, typed, csrf, "approve", map[string]string{"pmapi_csrf": csrf, "sid": tn.SID})
	if done.Status != 200 || !strings.Contains(string(done.Raw), "test app is connected") {
		t.Fatalf("approve: %d %s", done.Status, done.Raw)
	}
	if s, b := poll(t, env, tn.ClientID, dc["device_code"].(string)); s != 200 || b["access_token"] == nil {
		t.Errorf("token after approval: %d %v", s, b)
	}
}

// TestDevicePageLimitsWrongCodes: looking codes up is limited per caller like
// deciding them, so the page cannot be used to find pending codes.
func TestDevicePageLimitsWrongCodes(t *testing.T) {
	env, _, _ := oauthEnv(t, 30*time.Second)
	for i := range 6 {
		r := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/oauth/device?user_code=BCDF-GHJ" + string("KLMNPQ"[i])})
		want := 404
		if i == 5 {
			want = 429
		}
		if r.Status != want {
			t.Errorf("wrong code %d: %d, want %d", i+1, r.Status, want)
		}
	}
}
