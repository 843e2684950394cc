package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// urlsOf fetches the RFC 8414 metadata and starts a device authorization over
// a real loopback connection with headers, and returns the absolute URLs
// pmapi printed.
func urlsOf(t *testing.T, base, clientID string, headers map[string]string) (issuer string, urls []string) {
	t.Helper()
	call := func(method, path string, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, err)
		}
		return out
	}
	md := call("GET", "/.well-known/oauth-authorization-server", "")
	for _, k := range []string{
		"token_endpoint", "device_authorization_endpoint", "revocation_endpoint", "introspection_endpoint", "jwks_uri",
	} {
		urls = append(urls, md[k].(string))
	}
	dc := call("POST", "/openapi/v1/oauth/device/code", url.Values{"client_id": {clientID}}.Encode())
	urls = append(urls, dc["verification_uri"].(string), dc["verification_uri_complete"].(string))
	return md["issuer"].(string), urls
}

func allUnder(t *testing.T, what string, urls []string, base string) {
	t.Helper()
	for _, u := range urls {
		if !strings.HasPrefix(u, base+"/") {
			t.Errorf("%s: %s is not under %s", what, u, base)
		}
	}
}

var spoofed = map[string]string{
	"X-Forwarded-Host":  "evil.example",
	"X-Forwarded-Proto": "https",
	"Forwarded":         `host=evil.example;proto=https`,
}

// TestPublicURLDrivesEveryPrintedURL: with a public URL, the metadata's issuer
// is that URL (RFC 8414 section 3.3: the issuer is the URL the metadata is
// served under), and every URL pmapi prints starts with it, whatever a client
// or even a trusted proxy forwards.
func TestPublicURLDrivesEveryPrintedURL(t *testing.T) {
	const public = "https://api.example.com"
	env := apitest.New(t, func(c *apitest.Config) {
		c.PublicURL, c.OAuth.Issuer = public, public
		c.TrustedProxies = []string{"127.0.0.1/32"}
	})
	base, tn := env.Listen(t), env.NewTenant(t)
	issuer, urls := urlsOf(t, base, tn.ClientID, spoofed)
	if issuer != public {
		t.Errorf("issuer %q, want %q", issuer, public)
	}
	allUnder(t, "public URL", urls, public)
	// The issuer check a client makes (RFC 8414 section 3.3).
	const metadataPath = "/.well-known/oauth-authorization-server"
	if metadataAt := issuer + metadataPath; metadataAt != public+metadataPath {
		t.Errorf("metadata would be fetched from %s", metadataAt)
	}
}

// TestForwardedHeadersCountOnlyFromTrustedProxies: without a public URL, a
// client's X-Forwarded-Host, X-Forwarded-Proto and Forwarded are ignored unless
// it connects from a trusted proxy; from one they are used, the rightmost
// element of a list (the one the trusted proxy added) and RFC 7239's Forwarded
// first.
func TestForwardedHeadersCountOnlyFromTrustedProxies(t *testing.T) {
	untrusted := apitest.New(t, func(c *apitest.Config) { c.TrustedProxies = []string{"10.0.0.0/8"} })
	base, tn := untrusted.Listen(t), untrusted.NewTenant(t)
	_, urls := urlsOf(t, base, tn.ClientID, spoofed)
	allUnder(t, "a client that is no trusted proxy", urls, base)
	none := apitest.New(t)
	noneBase := none.Listen(t)
	_, urls = urlsOf(t, noneBase, none.NewTenant(t).ClientID, spoofed)
	allUnder(t, "no trusted proxies (the default)", urls, noneBase)

	trusted := apitest.New(t, func(c *apitest.Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	tbase := trusted.Listen(t)
	tn = trusted.NewTenant(t)
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{
			"X-Forwarded-*",
			map[string]string{"X-Forwarded-Host": "api.example.org", "X-Forwarded-Proto": "https"},
			"https://api.example.org",
		},
		{
			"the proxy's own element of a list",
			map[string]string{"X-Forwarded-Host": "evil.example, api.example.org", "X-Forwarded-Proto": "http,https"},
			"https://api.example.org",
		},
		{
			"Forwarded before X-Forwarded-*",
			map[string]string{
				"Forwarded":        `for=192.0.2.1;host=evil.example, for="[2001:db8::1]";host="api.example.net:8443";proto=https`,
				"X-Forwarded-Host": "api.example.org",
			},
			"https://api.example.net:8443",
		},
		{
			"a host that is no host",
			map[string]string{"X-Forwarded-Host": "api.example.org/evil?x=", "X-Forwarded-Proto": "javascript"},
			tbase,
		},
		{"nothing forwarded", nil, tbase},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, urls := urlsOf(t, tbase, tn.ClientID, c.headers)
			allUnder(t, c.name, urls, c.want)
		})
	}
}
