package console_test

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/pmapi/pmapi/console"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }

// The identity provider of the tests: zitadel/oidc's example OpenID Provider
// (its op package, with the example's in-memory storage and login form),
// serving the people below and one web client whose redirect URI is the
// console's callback.

const (
	opClient, opSecret, password = "pmapi-console", "console-secret", "correct horse"
)

// person is a login at the provider: its username is its email.
type person struct {
	email    string
	verified bool
}

type people map[string]*storage.User

func (p people) GetUserByID(id string) *storage.User { return p[id] }
func (p people) GetUserByUsername(name string) *storage.User {
	for _, u := range p {
		if u.Username == name {
			return u
		}
	}
	return nil
}
func (p people) ExampleClientID() string { return "service" }

// startProvider serves an OpenID Provider for the people, accepting the
// console at redirectURI.
func startProvider(t *testing.T, redirectURI string, who ...person) string {
	t.Helper()
	users := people{}
	for i, p := range who {
		id := "user-" + string(rune('a'+i))
		users[id] = &storage.User{ID: id, Username: p.email, Password: password, FirstName: "Test", LastName: "Person",
			Email: p.email, EmailVerified: p.verified, PreferredLanguage: language.English}
	}
	clients := map[string]*storage.Client{opClient: storage.WebClient(opClient, opSecret, redirectURI)}
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	srv.Config.Handler = exampleop.SetupServer(srv.URL, storage.NewStorageWithClients(users, clients), nil, false,
		op.WithAllowInsecure())
	return srv.URL
}

// rig is the API and the console on one loopback port, with a provider.
type rig struct {
	env     *apitest.Env
	base    string
	issuer  string
	admin   map[string]string
	console *console.Console
}

// newRig starts the API with the console (dev: cookies without Secure, so a
// plain http client keeps them) and a provider for who.
func newRig(t *testing.T, dev bool, who ...person) *rig {
	t.Helper()
	env := apitest.ReachingLoopbackHTTP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{env: env, base: "http://" + ln.Addr().String(), admin: env.Admin()}
	r.issuer = startProvider(t, r.base+"/console/callback", who...)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	r.console, err = console.Mount(env.App, console.Config{Directory: env.Directory, Dev: dev, Key: key,
		OIDC: &console.OIDCConfig{Issuer: r.issuer, ClientID: opClient, ClientSecret: opSecret}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = env.App.Listener(ln) }()
	t.Cleanup(func() { _ = env.App.Shutdown() })
	return r
}

// workspace makes a workspace that invites emails; it answers its id and
// console client id.
func (r *rig) workspace(t *testing.T, name string, emails ...string) (string, string) {
	t.Helper()
	ws := r.env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/admin/v1/workspaces",
			Header: r.admin,
			Body:   map[string]any{"name": name},
		},
	)
	if ws.Status != 201 {
		t.Fatalf("workspace: %d %s", ws.Status, ws.Raw)
	}
	id := ws.Str("workspaceId")
	for _, e := range emails {
		u := r.env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + id + "/users", Header: r.admin,
			Body: map[string]any{"email": e, "name": "Person"}})
		if u.Status != 201 {
			t.Fatalf("user %s: %d %s", e, u.Status, u.Raw)
		}
	}
	return id, ws.Str("consoleClientId")
}

// browser is an HTTP client with cookies that follows redirects and
// remembers the addresses it went through.
type browser struct {
	t      *testing.T
	c      *http.Client
	visits []string
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t}
	b.c = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		b.visits = append(b.visits, req.URL.String())
		return nil
	}}
	return b
}

// page is an answer: status, final address, headers and body.
type page struct {
	status int
	url    string
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, url: resp.Request.URL.String(), header: resp.Header, body: string(raw)}
}

func (b *browser) get(u string) page {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var (
	loginID   = regexp.MustCompile(`name="id" value="([^"]+)"`)
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// signIn goes through the provider's login form as email and answers the
// page the console ends on.
func (b *browser) signIn(base, email, returnTo string) page {
	b.t.Helper()
	start := base + "/console/login"
	if returnTo != "" {
		start += "?" + url.Values{"return_to": {returnTo}}.Encode()
	}
	login := b.get(start)
	m := loginID.FindStringSubmatch(login.body)
	if m == nil {
		b.t.Fatalf("no login form at the provider (%d %s):\n%s", login.status, login.url, login.body)
	}
	u, _ := url.Parse(login.url)
	return b.post(
		u.Scheme+"://"+u.Host+"/login/username",
		url.Values{"id": {m[1]}, "username": {email}, "password": {password}},
	)
}

// csrf is the page's form token.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF field on %s:\n%s", p.url, p.body)
	}
	return m[1]
}

// cookie is the value of the browser's cookie name for base.
func (b *browser) cookie(base, name string) string {
	u, _ := url.Parse(base + "/console/apps")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

type apitestRequest = apitest.Request

func regexpAll(expr, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(expr).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
