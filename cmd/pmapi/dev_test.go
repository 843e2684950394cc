package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testdb"
)

// TestDevServesWhatItPrints runs `pmapi dev --ephemeral` as a new user would and
// pastes the banner's lines: the document answers 200 and the printed console
// credentials identify the demo user.
func TestDevServesWhatItPrints(t *testing.T) {
	t.Setenv("PMAPI_DATABASE_URL", testdb.AdminURL(t))
	t.Setenv("PMAPI_ADMIN_TOKEN", "")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, []string{"--ephemeral", "--addr", "127.0.0.1:0"}, pw)
		pw.Close()
	}()
	banner := readBanner(t, pr, done)
	go io.Copy(io.Discard, pr)

	base := regexp.MustCompile(`serving (http://\S+)`).FindStringSubmatch(banner)
	client := regexp.MustCompile(`console client\s+(pm_cli_\w+)`).FindStringSubmatch(banner)
	sid := regexp.MustCompile(`session \(sid\)\s+(pms_\w+)`).FindStringSubmatch(banner)
	token := regexp.MustCompile(`operator token\s+(pmadm_\w+)`).FindStringSubmatch(banner)
	if base == nil || client == nil || sid == nil || token == nil {
		t.Fatalf("banner lacks the address, client id, sid or operator token:\n%s", banner)
	}

	get := func(path string, header map[string]string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", base[1]+path, nil)
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
	status, body := get("/openapi/v1/session", map[string]string{"X-Client-ID": client[1], "Cookie": "sid=" + sid[1]})
	if status != 200 || !strings.Contains(toJSON(body), "demo@example.com") {
		t.Errorf("session with the printed credentials: %d %v", status, body)
	}
	if status, _ := get("/admin/v1/workspaces", map[string]string{"Authorization": "Bearer " + token[1]}); status != 200 {
		t.Errorf("admin with the printed operator token: %d", status)
	}
	appID := regexp.MustCompile(`app client id\s+(pm_cli_\w+)`).FindStringSubmatch(banner)
	apiKey := regexp.MustCompile(`API key\s+(pmk_\w+)`).FindStringSubmatch(banner)
	if appID == nil || apiKey == nil {
		t.Fatalf("banner lacks the app client id or API key:\n%s", banner)
	}
	status, body = get("/openapi/v1/me", map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
	if status != 200 || len(body["data"].(map[string]any)["scopes"].([]any)) != 14 {
		t.Errorf("the printed API key: %d %v", status, body)
	}

	// River UI: behind the operator token (bearer or HTTP Basic), with a Basic
	// challenge for browsers.
	uiGet := func(path string, header map[string]string) *http.Response {
		req, _ := http.NewRequest("GET", base[1]+path, nil)
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
	if r := uiGet("/admin/river/default/", nil); r.StatusCode != 401 || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("River UI without credentials: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := uiGet("/admin/river/default/api/jobs?state=completed", map[string]string{"Authorization": "Bearer " + token[1]}); r.StatusCode != 200 {
		t.Errorf("River UI API with the operator token: %d", r.StatusCode)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+token[1]))
	if r := uiGet("/admin/river/default/", map[string]string{"Authorization": basic}); r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), "html") {
		t.Errorf("River UI page with Basic: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}

	// The demo content is there: projects and two similar analyses.
	status, body = get("/openapi/v1/resource/project/list", map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
	if status != 200 || len(body["data"].(map[string]any)["items"].([]any)) != 2 {
		t.Errorf("seeded projects: %d %v", status, body)
	}
	for path, want := range map[string]int{"task/list": 5, "risk/list": 2, "note/list": 2} {
		status, body = get("/openapi/v1/resource/"+path, map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
		if status != 200 || len(body["data"].(map[string]any)["items"].([]any)) != want {
			t.Errorf("seeded %s: %d %v", path, status, body)
		}
	}
	// Projects with members, tasks in several states.
	_, body = get("/openapi/v1/resource/project/list", map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
	for _, p := range body["data"].(map[string]any)["items"].([]any) {
		if members, _ := p.(map[string]any)["members"].([]any); len(members) == 0 {
			t.Errorf("seeded project without members: %v", p)
		}
	}
	_, body = get("/openapi/v1/resource/task/list", map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
	states := map[any]bool{}
	for _, it := range body["data"].(map[string]any)["items"].([]any) {
		states[it.(map[string]any)["status"]] = true
	}
	if len(states) < 3 {
		t.Errorf("seeded tasks are in %d states, want several: %v", len(states), states)
	}
	status, body = get("/openapi/v1/resource/rrca", map[string]string{"X-Client-ID": appID[1], "Authorization": apiKey[1]})
	if status != 200 || len(body["data"].(map[string]any)["items"].([]any)) != 2 {
		t.Errorf("seeded analyses: %d %v", status, body)
	}

	metricsURL := regexp.MustCompile(`metrics\s+(http://\S+)`).FindStringSubmatch(banner)
	if metricsURL == nil {
		t.Fatalf("banner lacks the metrics address:\n%s", banner)
	}
	resp, err := http.Get(metricsURL[1])
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkScrape(t, scrape)
	for _, want := range []string{`pmapi_http_requests_total{method="GET",route="/openapi/v1/session",status_class="2xx"}`,
		"pmapi_build_info{", `pmapi_auth_attempts_total{outcome="ok"}`, `pmapi_db_pool_connections{shard="default"`} {
		if !strings.Contains(string(scrape), want) {
			t.Errorf("scrape lacks %s", want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev returned %v after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dev did not stop within 30s of cancel")
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
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("dev output ended before the banner:\n%s", b.String())
			}
			b.WriteString(l + "\n")
			if strings.Contains(l, "/admin/v1/workspaces") {
				return b.String()
			}
		case err := <-done:
			t.Fatalf("dev stopped early: %v\n%s", err, b.String())
		case <-deadline:
			t.Fatalf("no banner within 60s:\n%s", b.String())
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
