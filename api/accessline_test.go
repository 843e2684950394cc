package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmapi/pmapi/api/apitest"
	"github.com/pmapi/pmapi/observability"
)

// The access lines pmapi serve's logger gets (written by hand,
// observability.JSONLine) are byte for byte what slog's JSON handler writes
// for the same values, with the members they always had, in their order.
func TestAccessLineIsSlogs(t *testing.T) {
	var out syncBuffer
	env := apitest.New(t, func(d *apitest.Config) {
		d.AccessLog = observability.NewLogger(&out, slog.LevelInfo, observability.FormatJSON)
	})
	tn := env.NewTenant(t)
	tn.Get(t, taskBase+"list", map[string]string{"limit": "5"})
	tn.Get(t, taskBase+"list", map[string]string{"limit": "abc"})
	env.Do(t, apitest.Request{Method: "GET", Path: "/no/such/route", Header: map[string]string{"X-Request-Id": "caller.id:1-2_3"}})
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

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
