package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignIn goes through the provider's login as each kind of person: an
// invited one lands where return_to said, signed in with a new session
// cookie; an unverified email, an unknown one and one whose only workspace is
// suspended each get a page that says so, and no session; one invited to two
// workspaces picks one.
func TestSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t, true, person{"ada@example.com", true}, person{"nova@example.com", false},
		person{"stranger@example.com", true}, person{"sus@example.com", true}, person{"multi@example.com", true})
	r.workspace(t, "Ada's", "ada@example.com", "nova@example.com")
	sus, _ := r.workspace(t, "Gone", "sus@example.com")
	if s := r.env.Do(t, adminReq("POST", "/admin/v1/workspaces/"+sus+"/suspend", r.admin)); s.Status != 200 {
		t.Fatalf("suspend: %d %s", s.Status, s.Raw)
	}
	r.workspace(t, "First", "multi@example.com")
	r.workspace(t, "Second", "multi@example.com")

	t.Run("an invited person returns where they were going", func(t *testing.T) {
		b := newBrowser(t)
		p := b.signIn(r.base, "ada@example.com", "/console/device?user_code=BCDF-GHJK")
		if !strings.HasSuffix(p.url, "/console/device?user_code=BCDF-GHJK") ||
			!strings.Contains(p.body, "ada@example.com") {
			t.Fatalf("landed on %s (%d):\n%s", p.url, p.status, p.body)
		}
		first := b.cookie(r.base, "sid")
		again := b.signIn(r.base, "ada@example.com", "")
		if !strings.HasSuffix(again.url, "/console/apps") || b.cookie(r.base, "sid") == first || first == "" {
			t.Errorf("a second sign-in keeps the session %q (%s)", first, again.url)
		}
		// The first session ended when the second began.
		old := newBrowser(t)
		u, _ := url.Parse(r.base)
		old.c.Jar.SetCookies(u, []*http.Cookie{{Name: "sid", Value: first, Path: "/"}})
		if p := old.get(r.base + "/console/apps"); !strings.Contains(p.url, "/console/login") &&
			!strings.Contains(p.url, "/login/username") {
			t.Errorf("the replaced session still works: %s", p.url)
		}
	})
	refused := map[string]struct {
		status int
		says   string
	}{
		"nova@example.com":     {401, "has not verified the address"},
		"stranger@example.com": {403, "No workspace has invited"},
		"sus@example.com":      {403, "is suspended"},
	}
	for email, want := range refused {
		t.Run(email, func(t *testing.T) {
			b := newBrowser(t)
			p := b.signIn(r.base, email, "")
			if p.status != want.status || !strings.Contains(p.body, want.says) || b.cookie(r.base, "sid") != "" {
				t.Errorf("%d, sid %q:\n%s", p.status, b.cookie(r.base, "sid"), p.body)
			}
		})
	}
	t.Run("a person of two workspaces picks one", func(t *testing.T) {
		b := newBrowser(t)
		p := b.signIn(r.base, "multi@example.com", "")
		if !strings.HasSuffix(p.url, "/console/pick") || !strings.Contains(p.body, "First") ||
			!strings.Contains(p.body, "Second") {
			t.Fatalf("no choice: %s\n%s", p.url, p.body)
		}
		if b.cookie(r.base, "sid") != "" {
			t.Fatal("a session before the choice")
		}
		ids := regexpAll(`name="workspace" value="([^"]+)"`, p.body)
		token := p.csrf(t)
		if bad := b.post(r.base+"/console/pick", url.Values{"csrf": {"forged"}, "workspace": {ids[1]}}); bad.status != 403 {
			t.Errorf("a forged token: %d", bad.status)
		}
		bad := b.post(r.base+"/console/pick", url.Values{"csrf": {token}, "workspace": {"not-a-uuid"}})
		if bad.status != 400 {
			t.Errorf("a bad choice: %d", bad.status)
		}
		done := b.post(r.base+"/console/pick", url.Values{"csrf": {token}, "workspace": {ids[1]}})
		if !strings.HasSuffix(done.url, "/console/apps") || !strings.Contains(done.body, "<strong>Second</strong>") {
			t.Fatalf("after the choice: %s\n%s", done.url, done.body)
		}
		if again := b.post(r.base+"/console/pick", url.Values{"csrf": {token}, "workspace": {ids[0]}}); again.status != 403 {
			t.Errorf("choosing twice: %d", again.status)
		}
	})
	t.Run("a replayed callback signs nobody in", func(t *testing.T) {
		b := newBrowser(t)
		b.signIn(r.base, "ada@example.com", "")
		var callback string
		for _, v := range b.visits {
			if strings.Contains(v, "/console/callback?") {
				callback = v
			}
		}
		if callback == "" {
			t.Fatalf("no callback among %v", b.visits)
		}
		for name, who := range map[string]*browser{"the same browser": b, "another browser": newBrowser(t)} {
			before := who.cookie(r.base, "sid")
			p := who.get(callback)
			if p.status != 400 || !strings.Contains(p.body, "Sign-in expired") || who.cookie(r.base, "sid") != before {
				t.Errorf("%s: %d\n%s", name, p.status, p.body)
			}
		}
	})
	t.Run("a foreign return_to is refused", func(t *testing.T) {
		for _, to := range []string{"https://evil.example/", "//evil.example/console", "/openapi/v1/apps",
			"/console/../admin",
			"/console/%2e%2e/admin", "/console\\evil", "javascript:alert(1)"} {
			p := newBrowser(t).get(r.base + "/console/login?" + url.Values{"return_to": {to}}.Encode())
			if p.status != 400 || !strings.Contains(p.body, "outside the console") {
				t.Errorf("return_to %q: %d %s", to, p.status, p.url)
			}
		}
	})
	t.Run("the provider's refusal is a page", func(t *testing.T) {
		b := newBrowser(t)
		p := b.get(r.base + "/console/callback?error=access_denied&state=x")
		if p.status != 400 || b.cookie(r.base, "sid") != "" {
			t.Errorf("%d %s", p.status, p.body)
		}
	})
}

func adminReq(method, path string, admin map[string]string) apitestRequest {
	return apitestRequest{Method: method, Path: path, Header: admin}
}
