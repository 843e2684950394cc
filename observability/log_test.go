package observability

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestLogLevelAndFormat: PMAPI_LOG_LEVEL picks the level (info by default, an
// unknown value refused) and the logger writes one JSON object per line.
func TestLogLevelAndFormat(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, "info": slog.LevelInfo, "DEBUG": slog.LevelDebug,
		"warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseLevel("verbose"); err == nil {
		t.Error("ParseLevel accepted verbose")
	}
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelWarn)
	log.Info("hidden")
	log.Warn("shown", "requestId", "req_1")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("at warn, %d lines: %q", len(lines), buf.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m["msg"] != "shown" || m["requestId"] != "req_1" || m["level"] != "WARN" {
		t.Errorf("line %s: %v", lines[0], err)
	}
}
