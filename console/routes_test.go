package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestConsoleRoutesRefuseWhatTheyShould drives every console route with what
// an attacker or a stale tab sends: no session, a bad or missing CSRF token, a
// form from another origin, another workspace's ids, malformed ids. Each gets
// a clear page; none a 500, and none changes anything.
func TestConsoleRoutesRefuseWhatTheyShould(t *testing.T) {
	t.Parallel()
	r := newRig(t, true, person{"own@example.com", true}, person{"other@example.com", true})
	r.workspace(t, "Own", "own@example.com")
	r.workspace(t, "Other", "other@example.com")
	own, other := newBrowser(t), newBrowser(t)
	own.signIn(r.base, "own@example.com", "")
	other.signIn(r.base, "other@example.com", "")

	apps := own.get(r.base + "/console/apps")
	token := apps.csrf(t)
	created := own.post(r.base+"/console/apps", url.Values{"csrf": {token}, "name": {"Mine"}, "scopes": {"tasks:read"}})
	if created.status != 201 || !strings.Contains(created.body, "pm_sec_") {
		t.Fatalf("create: %d\n%s", created.status, created.body)
	}
	mine := regexpAll(`<code>(pm_cli_[A-Za-z0-9]+)</code>`, created.body)[0]

	for _, path := range []string{"/console/apps", "/console/apps/" + mine + "/keys", "/console/device"} {
		if p := newBrowser(t).get(r.base + path); !strings.Contains(p.url, "/login/username") {
			t.Errorf("%s without a session went to %s", path, p.url)
		}
	}
	forms := []string{"/console/apps", "/console/apps/" + mine + "/status", "/console/apps/" + mine + "/delete",
		"/console/apps/" + mine + "/keys", "/console/apps/" + mine + "/keys/key_x/revoke",
		"/console/apps/" + mine + "/webhooks", "/console/apps/" + mine + "/webhooks/whk_x/test",
		"/console/apps/" + mine + "/deliveries/replay", "/console/apps/" + mine + "/deliveries/evt_x/replay",
		"/console/device", "/console/logout"}
	for _, path := range forms {
		tokens := map[string]string{"no token": "", "a forged token": "forged",
			"another session's": other.get(r.base + "/console/apps").csrf(t)}
		for name, tok := range tokens {
			if p := own.post(r.base+path, url.Values{"csrf": {tok}, "name": {"x"}, "action": {"disable"}}); p.status != 403 {
				t.Errorf("POST %s with %s: %d", path, name, p.status)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, r.base+"/console/apps/"+mine+"/status",
		strings.NewReader(url.Values{"csrf": {token}, "action": {"disable"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if p := own.do(req); p.status != 403 {
		t.Errorf("a form from another origin: %d", p.status)
	}
	if p := own.get(r.base + "/console/apps"); !strings.Contains(p.body, "status-ACTIVE") {
		t.Errorf("a refused form changed the app:\n%s", p.body)
	}

	// Another workspace's session with the first's ids: not found, never a 500.
	otherToken := other.get(r.base + "/console/apps").csrf(t)
	gets := []string{
		"/console/apps/" + mine + "/keys",
		"/console/apps/" + mine + "/webhooks",
		"/console/apps/" + mine + "/deliveries",
		"/console/apps/" + mine + "/deliveries/evt_01JD8X3Q4ZP6V1T9K2M5N7R8S0",
		"/console/apps/nonsense/keys",
		"/console/apps/%2e%2e/keys",
		"/console/apps/" + mine + "/deliveries?cursor=garbage",
		"/console/apps?cursor=garbage",
		"/console/device?user_code=BCDF-GHJK",
		"/console/no-such-page",
	}
	for _, path := range gets {
		p := other.get(r.base + path)
		if p.status >= 500 || p.status < 400 || strings.Contains(p.body, mine+"</code>") {
			t.Errorf("GET %s as another workspace: %d\n%s", path, p.status, p.body)
		}
	}
	for _, path := range forms[1:10] {
		p := other.post(
			r.base+path,
			url.Values{"csrf": {otherToken}, "action": {"disable"}, "ids": {"evt_x"}, "scopes": {"tasks:read"},
				"url": {"http://127.0.0.1:1/x"}, "events": {"*"}},
		)
		if p.status >= 500 || p.status < 400 && path != "/console/apps/"+mine+"/status" {
			t.Errorf("POST %s as another workspace: %d\n%s", path, p.status, p.body)
		}
	}
	if p := own.get(r.base + "/console/apps"); !strings.Contains(p.body, "status-ACTIVE") ||
		!strings.Contains(p.body, mine) {
		t.Errorf("another workspace changed the app:\n%s", p.body)
	}
	// The API's refusals read as messages on the page.
	p := own.post(r.base+"/console/apps/"+mine+"/keys", url.Values{"csrf": {token}, "scopes": {"tasks:write"}})
	if p.status != 400 || !strings.Contains(p.body, `role="alert"`) || !strings.Contains(p.body, "tasks:write") {
		t.Errorf("a scope outside the app's: %d\n%s", p.status, p.body)
	}
	p = own.post(
		r.base+"/console/apps/"+mine+"/webhooks",
		url.Values{"csrf": {token}, "url": {"ftp://x"}, "events": {"*"}},
	)
	if p.status != 400 || !strings.Contains(p.body, `role="alert"`) {
		t.Errorf("a bad webhook URL: %d\n%s", p.status, p.body)
	}
}

// TestConsoleHeaders: every console answer carries the policy of DESIGN.md
// section 9, and the cookies of sign-in are HttpOnly, SameSite=Lax and (out of
// pmapi dev) Secure.
func TestConsoleHeaders(t *testing.T) {
	t.Parallel()
	r := newRig(t, false, person{"h@example.com", true})
	r.workspace(t, "H", "h@example.com")
	b := newBrowser(t)
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, path := range []string{"/console/login", "/console/apps", "/console/static/htmx.min.js",
		"/console/static/console.css",
		"/console/nothing", "/console/dev/signin/abc"} {
		p := b.get(r.base + path)
		if p.header.Get("Content-Security-Policy") != "default-src 'self'; frame-ancestors 'none'" ||
			p.header.Get("X-Content-Type-Options") != "nosniff" || p.status >= 500 {
			t.Errorf("%s: %d %v", path, p.status, p.header)
		}
	}
	if p := b.get(r.base + "/console/dev/signin/abc"); p.status != 404 {
		t.Errorf("the dev sign-in route exists outside dev: %d", p.status)
	}
	// Sign in by hand, to read the Set-Cookie of the callback.
	b.c.CheckRedirect = nil
	var cookies []string
	b.c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if last := via[len(via)-1]; strings.Contains(last.URL.Path, "/console/callback") {
			cookies = append(cookies, req.Response.Header.Values("Set-Cookie")...)
		}
		return nil
	}
	b.signIn(r.base, "h@example.com", "")
	var sid string
	for _, c := range cookies {
		if strings.HasPrefix(c, "sid=") {
			sid = c
		}
	}
	for _, attr := range []string{"HttpOnly", "Secure", "SameSite=Lax", "path=/"} {
		if !strings.Contains(strings.ToLower(sid), strings.ToLower(attr)) {
			t.Errorf("the session cookie %q lacks %s", sid, attr)
		}
	}
}

// TestSignOutEndsTheSessionOnTheServer: after sign-out the old sid is
// refused by the API itself, not only forgotten by the browser.
func TestSignOutEndsTheSessionOnTheServer(t *testing.T) {
	t.Parallel()
	r := newRig(t, true, person{"out@example.com", true})
	_, console := r.workspace(t, "Out", "out@example.com")
	b := newBrowser(t)
	apps := b.signIn(r.base, "out@example.com", "")
	sid := b.cookie(r.base, "sid")
	if p := b.post(r.base+"/console/logout", url.Values{"csrf": {apps.csrf(t)}}); p.status != 200 ||
		!strings.Contains(p.body, "Signed out") {
		t.Fatalf("sign-out: %d\n%s", p.status, p.body)
	}
	req, _ := http.NewRequest(http.MethodGet, r.base+"/openapi/v1/session", nil)
	req.Header.Set("X-Client-ID", console)
	req.AddCookie(&http.Cookie{Name: "sid", Value: sid})
	if p := newBrowser(t).do(req); p.status != 401 {
		t.Errorf("the ended session: %d %s", p.status, p.body)
	}
}
