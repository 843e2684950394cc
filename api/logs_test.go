package api_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/api/apitest"
	"github.com/pmapi/pmapi/jobs"
)

// logLines decodes the JSON log lines captured so far.
func logLines(t *testing.T, env *apitest.Env) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(env.Logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// TestRequestAndJobLogLines: one JSON line per request with its request id,
// route template (never the raw path), status, latency, workspace and app client
// id, and neither the key nor the body; one line per job run with its id and kind.
func TestRequestAndJobLogLines(t *testing.T) {
	env := apitest.New(t)
	env.StartWorkers(t, func(o *jobs.Options) { o.Log = slog.New(slog.NewJSONHandler(env.Logs, nil)) })
	tn := env.NewTenant(t)
	const marker = "body text that must not be logged"
	r := tn.Do(t, "POST", projectBase+"create", map[string]any{"name": marker})
	if r.Status != 201 {
		t.Fatalf("create: %s", r.Raw)
	}
	id := createActionItem(t, tn, map[string]any{"title": "x"})["id"].(string)
	got := tn.Get(t, aiBase+id+"/logs", nil)
	reqID := got.Header.Get("X-Request-Id")

	var line map[string]any
	apitest.Eventually(t, 20*time.Second, "job log line", func() bool {
		for _, l := range logLines(t, env) {
			if l["msg"] == "job" && l["kind"] == "event.fanout" && l["jobId"] != nil {
				return true
			}
		}
		return false
	})
	for _, l := range logLines(t, env) {
		if l["msg"] == "request" && l["requestId"] == reqID {
			line = l
		}
	}
	if line == nil {
		t.Fatalf("no request line with id %s", reqID)
	}
	if line["method"] != "GET" || line["status"] != float64(200) || line["workspaceId"] != tn.WorkspaceID || line["clientId"] != tn.ClientID {
		t.Errorf("request line %v", line)
	}
	if route, _ := line["route"].(string); route == "" || strings.Contains(route, id) {
		t.Errorf("route %q: want the template, not the raw path", route)
	}
	if _, ok := line["latencyMs"].(float64); !ok {
		t.Errorf("no latencyMs: %v", line)
	}
	logs := env.Logs.String()
	for _, secret := range []string{tn.Key, tn.SID, marker} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log carries %.12s...", secret)
		}
	}
}
