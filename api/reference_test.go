package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"html"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestReferencePageIsServedStrictly: /docs is a page whose scripts all come
// from this server (no CDN), under a CSP that runs no inline or evaluated
// script; the bundle is the documented Redoc release, compressed on request.
func TestReferencePageIsServedStrictly(t *testing.T) {
	env := apitest.New(t)
	page := env.Do(t, apitest.Request{Method: "GET", Path: "/docs"})
	csp := page.Header.Get("Content-Security-Policy")
	if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		page.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("/docs: %d %v", page.Status, page.Header)
	}
	script := regexp.MustCompile(`script-src ([^;]*)`).FindStringSubmatch(csp)
	if script == nil || strings.TrimSpace(script[1]) != "'self'" || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q: scripts must come from this origin only", csp)
	}
	srcs := regexp.MustCompile(`<script src="([^"]+)"`).FindAllStringSubmatch(string(page.Raw), -1)
	if len(srcs) != 2 || strings.Contains(string(page.Raw), "<script>") {
		t.Fatalf("page scripts %v:\n%s", srcs, page.Raw)
	}
	for _, src := range srcs {
		if !strings.HasPrefix(src[1], "/docs/") {
			t.Errorf("script %s is not this server's", src[1])
			continue
		}
		r := env.Do(t, apitest.Request{Method: "GET", Path: src[1], Header: map[string]string{"Accept-Encoding": "gzip"}})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") ||
			r.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d %v", src[1], r.Status, r.Header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.Raw))
		if err == nil {
			_, err = io.Copy(io.Discard, zr)
		}
		if err != nil {
			t.Errorf("%s: not gzip: %v", src[1], err)
		}
	}
	if r := env.Do(t, apitest.Request{Method: "GET", Path: "/docs/other.js"}); r.Status != 404 {
		t.Errorf("unknown file: %d", r.Status)
	}
	notice, err := os.ReadFile("reference/redoc.standalone.js.LICENSE.txt")
	if err != nil || !strings.Contains(string(notice), `Version: "`+api.RedocVersion+`"`) {
		t.Errorf("the embedded bundle is not Redoc %s (its licence notice says otherwise): %v", api.RedocVersion, err)
	}
}

// TestReferencePageRendersInChromium loads /docs in headless Chromium, waits for
// Redoc to render the served document, and finds operations in the page; any
// CSP violation fails it (but Redoc's own footer logo from its CDN, which the
// policy is meant to block and Redoc then hides).
func TestReferencePageRendersInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip(
			"no headless Chromium here, so the page is not rendered: apt-get install chromium (Debian); " +
				"make docs-check fails instead of skipping",
		)
	}
	env := apitest.New(t)
	base := env.Listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(
		ctx,
		browser,
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr",
		"--v=0",
		"--virtual-time-budget=30000",
		"--dump-dom",
		base+"/docs",
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	text := html.UnescapeString(string(dom))
	ops := map[string]string{}
	for _, op := range env.Server.Operations() {
		ops[op.ID] = op.Summary
	}
	for _, id := range []string{
		"createProject", "createTask", "advanceRRCA", "search", "oauthDeviceCode", "createWebhook",
	} {
		if ops[id] == "" || !strings.Contains(text, ops[id]) {
			t.Errorf("the rendered reference lacks %s (%q)", id, ops[id])
		}
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "Content Security Policy") &&
			!strings.Contains(line, "https://cdn.redoc.ly/redoc/logo-mini.svg") {
			t.Errorf("CSP violation: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("DOM (%d bytes) begins:\n%.2000s", len(dom), dom)
	}
}
