package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/observability"
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
	r := tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": marker})
	if r.Status != 201 {
		t.Fatalf("create: %s", r.Raw)
	}
	id := tn.CreateActionItem(t, map[string]any{"title": "x"})["id"].(string)
	got := tn.Get(t, apitest.ActionItemBase+id+"/logs", nil)
	reqID := got.Header.Get("X-Request-Id")

	var line map[string]any
	apitest.Eventually(t, apitest.JobWait, "job log line", func() bool {
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
	if line["method"] != "GET" || line["status"] != float64(200) || line["workspaceId"] != tn.WorkspaceID ||
		line["clientId"] != tn.ClientID {
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

// The access lines pmapi serve's logger gets (written by hand,
// observability.JSONLine) are byte for byte what slog's JSON handler writes
// for the same values, with the members they always had, in their order.
func TestAccessLineIsSlogs(t *testing.T) {
	var out apitest.SafeBuffer
	env := apitest.New(t, func(d *apitest.Config) {
		d.AccessLog = observability.NewLogger(&out, slog.LevelInfo, observability.FormatJSON)
	})
	tn := env.NewTenant(t)
	tn.Get(t, apitest.TaskBase+"list", map[string]string{"limit": "5"})
	tn.Get(t, apitest.TaskBase+"list", map[string]string{"limit": "abc"})
	env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/no/such/route", Header: map[string]string{"X-Request-Id": "caller.id:1-2_3"}},
	)
	env.Do(t, apitest.Request{Method: "GET", Path: "/healthz"})

	want := []string{
		"time level msg requestId method route status latencyMs workspaceId clientId",
		"time level msg requestId method route status latencyMs workspaceId clientId code",
		"time level msg requestId method route status latencyMs code",
		"time level msg requestId method route status latencyMs",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < len(want) {
		t.Fatalf("%d access lines, want %d or more:\n%s", len(lines), len(want), out.String())
	}
	lines = lines[len(lines)-len(want):] // the tenant's making comes first
	for i, line := range lines {
		keys, record := asSlogRecord(t, line)
		if strings.Join(keys, " ") != want[i] {
			t.Errorf("line %d members %v, want %s", i, keys, want[i])
		}
		var again bytes.Buffer
		if err := slog.NewJSONHandler(&again, nil).Handle(context.Background(), record); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(again.String()); got != line {
			t.Errorf("line %d\n%s\nslog writes\n%s", i, line, got)
		}
	}
}

// asSlogRecord reads an access line back into the slog record that would
// write it: its members in order, status an int and latencyMs a float.
func asSlogRecord(t *testing.T, line string) ([]string, slog.Record) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var at time.Time
	var msg string
	var attrs []slog.Attr
	for dec.More() {
		k, _ := dec.Token()
		v, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := k.(string)
		keys = append(keys, key)
		switch val := v.(type) {
		case json.Number:
			if key == "status" {
				n, _ := val.Int64()
				attrs = append(attrs, slog.Int(key, int(n)))
			} else {
				f, _ := val.Float64()
				attrs = append(attrs, slog.Float64(key, f))
			}
		case string:
			switch key {
			case "time":
				at, err = time.Parse(time.RFC3339Nano, val)
				if err != nil {
					t.Fatal(err)
				}
			case "msg":
				msg = val
			case "level":
			default:
				attrs = append(attrs, slog.String(key, val))
			}
		}
	}
	r := slog.NewRecord(at, slog.LevelInfo, msg, 0)
	r.AddAttrs(attrs...)
	return keys, r
}
