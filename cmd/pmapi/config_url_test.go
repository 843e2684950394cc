package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestPublicURLAndTrustedProxiesSettings(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.example.com": "https://api.example.com", "https://API.example.com/": "https://api.example.com",
		"http://10.0.0.1:8080": "http://10.0.0.1:8080", "": "",
	} {
		if got, err := parsePublicURL(raw); err != nil || got != want {
			t.Errorf("PMAPI_PUBLIC_URL=%q: %q %v, want %q", raw, got, err, want)
		}
	}
	for _, bad := range []string{
		"api.example.com", "ftp://api.example.com", "https://api.example.com/pmapi", "https://u:p@api.example.com",
		"https://api.example.com?x=1", "https://",
	} {
		if got, err := parsePublicURL(bad); err == nil {
			t.Errorf("PMAPI_PUBLIC_URL=%q accepted as %q", bad, got)
		}
	}
	got, err := parseTrustedProxies(" 10.0.0.0/8, 192.168.1.10 ,2001:db8::/32,10.1.2.3/16,::ffff:172.16.0.1,")
	if want := []string{"10.0.0.0/8", "192.168.1.10/32", "2001:db8::/32", "10.1.0.0/16", "172.16.0.1/32"}; err != nil ||
		!slices.Equal(got, want) {
		t.Errorf("PMAPI_TRUSTED_PROXIES: %v %v, want %v", got, err, want)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "fe80::1%eth0", "*"} {
		if _, err := parseTrustedProxies(bad); err == nil || !strings.Contains(err.Error(), "PMAPI_TRUSTED_PROXIES") {
			t.Errorf("PMAPI_TRUSTED_PROXIES=%q: %v", bad, err)
		}
	}

	// The issuer follows the public URL unless set itself; "pmapi" when
	// neither is.
	if c, err := loadConfig(); err != nil || c.OAuthIssuer != "pmapi" || c.PublicURL != "" || c.TrustedProxies != nil {
		t.Errorf("defaults: %+v %v", c, err)
	}
	t.Setenv("PMAPI_PUBLIC_URL", "https://api.example.com/")
	if c, err := loadConfig(); err != nil || c.OAuthIssuer != "https://api.example.com" {
		t.Errorf("issuer with a public URL: %q %v", c.OAuthIssuer, err)
	}
	t.Setenv("PMAPI_OAUTH_ISSUER", "https://id.example.com")
	if c, err := loadConfig(); err != nil || c.OAuthIssuer != "https://id.example.com" {
		t.Errorf("issuer set itself: %q %v", c.OAuthIssuer, err)
	}
}

// documentedHelmValues are the --set arguments of the `helm install` in
// docs/operations.md, "Deploying with Helm".
func documentedHelmValues(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "helm install pmapi charts/pmapi \\\n")
	if !ok {
		t.Fatal("docs/operations.md has no `helm install pmapi charts/pmapi \\` command")
	}
	var args []string
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimSpace(line)
		for _, f := range strings.Fields(strings.TrimSuffix(line, "\\")) {
			args = append(args, strings.Trim(f, "'"))
		}
		if !strings.HasSuffix(line, "\\") {
			break
		}
	}
	return args
}

var chartEnv = regexp.MustCompile(`- name: (PMAPI_[A-Z_]+)\n\s+value: (".*")`)

// TestChartDeploymentPassesTheIssuerCheck renders the chart with the values
// docs/operations.md tells operators to use, starts the API with the API
// Deployment's environment, and fetches the RFC 8414 metadata as the proxy in
// front of it would, with the Service's host name: the issuer is the public
// URL, and the metadata's URL built from it (RFC 8414 section 3.3) is where
// clients fetch it.
func TestChartDeploymentPassesTheIssuerCheck(t *testing.T) {
	helm, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("helm is not on PATH; make test puts it in .tools/bin (charts/tools.sh)")
		}
		t.Skip("helm not on PATH (make test puts it in .tools/bin)")
	}
	args := append(
		[]string{
			"template",
			"pmapi",
			filepath.Join("..", "..", "charts", "pmapi"),
			"--show-only",
			"templates/deployment-api.yaml",
		},
		documentedHelmValues(t)...)
	out, err := exec.Command(helm, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	env := map[string]string{}
	for _, m := range chartEnv.FindAllStringSubmatch(string(out), -1) {
		if env[m[1]], err = strconv.Unquote(m[2]); err != nil {
			t.Fatalf("%s: %s", m[1], m[2])
		}
	}
	public := env["PMAPI_PUBLIC_URL"]
	if public == "" || env["PMAPI_TRUSTED_PROXIES"] == "" {
		t.Fatalf("the documented values set no public URL or trusted proxies: %v", env)
	}
	mode := testdb.TenantSetting(t) // before the chart's values replace the package's
	for k, v := range env {
		t.Setenv(k, v)
	}
	// What the Secret and the pod provide, and this test's own database.
	t.Setenv("PMAPI_DATABASE_URL", testdb.Database(t).AppURL)
	t.Setenv("PMAPI_SECRET_KEY", deploymentSecret)
	t.Setenv("PMAPI_METRICS_ADDR", "off")
	t.Setenv("PMAPI_TENANT_SETTING", mode.String())
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServer(context.Background(), cfg, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	req := httptest.NewRequest("GET", "http://pmapi:8080/.well-known/oauth-authorization-server", nil)
	req.Header.Set("X-Forwarded-Host", "evil.example")
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metadata: %d %v", resp.StatusCode, err)
	}
	if md.Issuer != public || md.TokenEndpoint != public+"/openapi/v1/oauth/token" {
		t.Errorf(
			"metadata issuer %q, token endpoint %q; want both under the public URL %q",
			md.Issuer,
			md.TokenEndpoint,
			public,
		)
	}
}
