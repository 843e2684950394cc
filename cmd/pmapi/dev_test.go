package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestDevServesWhatItPrints runs `pmapi dev --ephemeral` as a new user would and
// pastes the banner's lines: the document answers 200 and the printed console
// credentials identify the demo user.
func TestDevServesWhatItPrints(t *testing.T) {
	banner, stop := startDev(t)
	vars := bannerVars(t, banner)
	base, client, sid, token := vars["BASE"], vars["CONSOLE_CLIENT_ID"], vars["SID"], vars["ADMIN_TOKEN"]

	get := func(path string, header map[string]string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if status, body := get("/openapi/v1/openapi.json", nil); status != 200 || body["openapi"] == nil {
		t.Errorf("openapi.json: %d", status)
	}
	// Readiness runs the real check (every shard reachable and carrying pmapi's
	// and River's newest migration) as the server's role, without credentials.
	if status, body := get("/readyz", nil); status != 200 || body["status"] != "ok" {
		t.Errorf("readyz: %d %v", status, body)
	}
	status, body := get("/openapi/v1/session", map[string]string{"X-Client-ID": client, "Cookie": "sid=" + sid})
	if status != 200 || !strings.Contains(toJSON(body), "demo@example.com") {
		t.Errorf("session with the printed credentials: %d %v", status, body)
	}
	if status, _ := get("/admin/v1/workspaces", map[string]string{"Authorization": "Bearer " + token}); status != 200 {
		t.Errorf("admin with the printed operator token: %d", status)
	}
	appID, apiKey := vars["CLIENT_ID"], vars["API_KEY"]
	status, body = get("/openapi/v1/me", map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
	if status != 200 || len(body["data"].(map[string]any)["scopes"].([]any)) != 15 {
		t.Errorf("the printed API key: %d %v", status, body)
	}

	// The seeded app starts a device flow, and the metadata names this server
	// as the issuer (RFC 8414).
	if !strings.Contains(banner, base+"/openapi/v1/oauth/device ") || !strings.Contains(banner, base+"/docs\n") {
		t.Errorf("banner lacks the device page or the reference:\n%s", banner)
	}
	resp, err := http.PostForm(base+"/openapi/v1/oauth/device/code", url.Values{"client_id": {appID}})
	if err != nil {
		t.Fatal(err)
	}
	var started map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != 200 || started["user_code"] == nil ||
		!strings.HasPrefix(started["verification_uri"].(string), base) {
		t.Errorf("device code for the seeded app: %d %v", resp.StatusCode, started)
	}
	if status, meta := get("/.well-known/oauth-authorization-server", nil); status != 200 || meta["issuer"] != base {
		t.Errorf("metadata issuer: %d %v, want %s", status, meta, base)
	}

	// River UI: behind the operator token (bearer or HTTP Basic), with a Basic
	// challenge for browsers.
	uiGet := func(path string, header map[string]string) *http.Response {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := uiGet("/admin/river/default/", nil); r.StatusCode != 401 ||
		!strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("River UI without credentials: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	if r := uiGet("/admin/river/default/api/jobs?state=completed", bearer); r.StatusCode != 200 {
		t.Errorf("River UI API with the operator token: %d", r.StatusCode)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+token))
	if r := uiGet("/admin/river/default/", map[string]string{"Authorization": basic}); r.StatusCode != 200 ||
		!strings.Contains(r.Header.Get("Content-Type"), "html") {
		t.Errorf("River UI page with Basic: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}

	// The demo content is there: projects and two similar analyses.
	status, body = get(
		"/openapi/v1/resource/project/list",
		map[string]string{"X-Client-ID": appID, "Authorization": apiKey},
	)
	if status != 200 || len(body["data"].(map[string]any)["items"].([]any)) != 2 {
		t.Errorf("seeded projects: %d %v", status, body)
	}
	for path, want := range map[string]int{"task/list": 5, "risk/list": 2, "note/list": 2} {
		status, body = get("/openapi/v1/resource/"+path, map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
		if status != 200 || len(body["data"].(map[string]any)["items"].([]any)) != want {
			t.Errorf("seeded %s: %d %v", path, status, body)
		}
	}
	// Projects with members, tasks in several states.
	_, body = get("/openapi/v1/resource/project/list", map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
	for _, p := range body["data"].(map[string]any)["items"].([]any) {
		if members, _ := p.(map[string]any)["members"].([]any); len(members) == 0 {
			t.Errorf("seeded project without members: %v", p)
		}
	}
	_, body = get("/openapi/v1/resource/task/list", map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
	states := map[any]bool{}
	for _, it := range body["data"].(map[string]any)["items"].([]any) {
		states[it.(map[string]any)["status"]] = true
	}
	if len(states) < 3 {
		t.Errorf("seeded tasks are in %d states, want several: %v", len(states), states)
	}
	status, body = get("/openapi/v1/resource/rrca", map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
	if items, _ := body["data"].(map[string]any)["items"].([]any); status != 200 || len(items) != 2 ||
		items[0].(map[string]any)["projectId"] == items[1].(map[string]any)["projectId"] {
		t.Errorf("seeded analyses, want two in two projects: %d %v", status, body)
	}
	// The two seeded analyses find each other through the similarity job.
	if items, _ := body["data"].(map[string]any)["items"].([]any); len(items) == 2 {
		first, second := items[0].(map[string]any)["id"].(string), items[1].(map[string]any)["id"].(string)
		var sim map[string]any
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			_, b := get(
				"/openapi/v1/resource/rrca/"+first+"/similar",
				map[string]string{"X-Client-ID": appID, "Authorization": apiKey},
			)
			sim, _ = b["data"].(map[string]any)
			if found, _ := sim["items"].([]any); sim["pending"] == false && len(found) > 0 {
				break
			}
		}
		if found, _ := sim["items"].([]any); len(found) == 0 || found[0].(map[string]any)["rrcaId"] != second {
			t.Errorf("similar of the first seeded analysis: %v, want the second first", sim)
		}
		// 5-why and look-across on the seeded analysis produce something real.
		auth := map[string]string{"X-Client-ID": appID, "Authorization": apiKey}
		rrcaPath := "/openapi/v1/resource/rrca/" + first
		for _, kind := range []struct{ suggest, read, results string }{
			{"/5why/suggest", "/5why/suggestions/", ""},
			{"/look-across/suggest", "/look-across/runs/", "/look-across"},
		} {
			req, _ := http.NewRequest("POST", base+rrcaPath+kind.suggest, nil)
			for k, v := range auth {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var created map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&created)
			resp.Body.Close()
			runID, _ := created["data"].(map[string]any)["id"].(string)
			if resp.StatusCode != 201 || runID == "" {
				t.Errorf("%s: %d %v", kind.suggest, resp.StatusCode, created)
				continue
			}
			var run map[string]any
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				_, b := get(rrcaPath+kind.read+runID, auth)
				run, _ = b["data"].(map[string]any)
				if run["status"] == "READY" || run["status"] == "FAILED" {
					break
				}
			}
			found, _ := run["nodes"].([]any)
			if kind.results != "" {
				_, b := get(rrcaPath+kind.results, auth)
				found, _ = b["data"].(map[string]any)["items"].([]any)
			}
			if run["status"] != "READY" || len(found) == 0 {
				t.Errorf("%s on the seeded analysis: run %v, %d results", kind.suggest, run, len(found))
			}
		}
	}

	metricsURL := regexp.MustCompile(`metrics\s+(http://\S+)`).FindStringSubmatch(banner)
	if !strings.Contains(banner, "receivers on this machine are allowed, http:// too") {
		t.Errorf("banner does not say loopback webhooks are allowed:\n%s", banner)
	}
	if metricsURL == nil {
		t.Fatalf("banner lacks the metrics address:\n%s", banner)
	}
	// The top workspaces gauge has series only after a usage flush that saw
	// requests (startDev flushes every second): scrape until one has.
	var scrape []byte
	for deadline := time.Now().Add(20 * time.Second); ; {
		get("/openapi/v1/me", map[string]string{"X-Client-ID": appID, "Authorization": apiKey})
		resp, err = http.Get(metricsURL[1])
		if err != nil {
			t.Fatal(err)
		}
		scrape, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(scrape, []byte("pmapi_usage_top_workspace_requests_per_second{")) || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	checkScrape(t, scrape)
	for _, want := range []string{
		`pmapi_http_requests_total{code="",method="GET",route="/openapi/v1/session",status_class="2xx"}`,
		"pmapi_build_info{",
		`pmapi_auth_attempts_total{outcome="ok"}`,
		`pmapi_db_pool_connections{shard="default"`,
	} {
		if !strings.Contains(string(scrape), want) {
			t.Errorf("scrape lacks %s", want)
		}
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// startDev runs `pmapi dev --ephemeral` on the test database and returns its
// banner once printed, and stop, which cancels it and says whether it ended
// cleanly within 30 s.
func startDev(t *testing.T) (banner string, stop func() error) {
	t.Helper()
	t.Setenv("PMAPI_DATABASE_URL", testdb.AdminURL(t))
	t.Setenv("PMAPI_ADMIN_TOKEN", "")
	t.Setenv("PMAPI_LOG_LEVEL", "warn")
	t.Setenv("PMAPI_USAGE_FLUSH", "1s")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, []string{"--ephemeral", "--addr", "127.0.0.1:0"}, pw)
		pw.Close()
	}()
	banner = readBanner(t, pr, done)
	go io.Copy(io.Discard, pr)
	return banner, func() error {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("dev returned %v after cancel", err)
			}
			return nil
		case <-time.After(30 * time.Second):
			return errors.New("dev did not stop within 30s of cancel")
		}
	}
}

func readBanner(t *testing.T, r io.Reader, done chan error) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var b strings.Builder
	// On Citus the migrations distribute every table before the banner.
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("dev output ended before the banner:\n%s", b.String())
			}
			b.WriteString(l + "\n")
			if strings.Contains(l, `"$BASE/openapi/v1/me"`) {
				return b.String()
			}
		case err := <-done:
			t.Fatalf("dev stopped early: %v\n%s", err, b.String())
		case <-deadline:
			t.Fatalf("no banner within 60s:\n%s", b.String())
		}
	}
}

// bannerVars reads the banner's export lines, failing the test when one the
// docs use is missing.
func bannerVars(t *testing.T, banner string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  export (\w+)=(\S+)`).FindAllStringSubmatch(banner, -1) {
		vars[m[1]] = m[2]
	}
	for _, name := range []string{
		"BASE", "WORKSPACE_ID", "CONSOLE_CLIENT_ID", "SID", "CLIENT_ID", "API_KEY", "ADMIN_TOKEN",
	} {
		if vars[name] == "" {
			t.Fatalf("banner lacks export %s:\n%s", name, banner)
		}
	}
	return vars
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
