package observability

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"regexp"
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
	log := NewLogger(&buf, slog.LevelWarn, FormatJSON)
	log.Info("hidden")
	log.Warn("shown", "requestId", "req_1")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("at warn, %d lines: %q", len(lines), buf.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m["msg"] != "shown" || m["requestId"] != "req_1" ||
		m["level"] != "WARN" {
		t.Errorf("line %s: %v", lines[0], err)
	}
}

// TestLogFormat: PMAPI_LOG_FORMAT chooses; unset, only a terminal gets text.
// Text lines are slog's key=value form with the time of day.
func TestLogFormat(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	for _, c := range []struct {
		env  string
		w    any
		want Format
	}{
		{"", pipeW, FormatJSON},
		{"", &bytes.Buffer{}, FormatJSON},
		{"text", pipeW, FormatText},
		{"JSON", pipeW, FormatJSON},
	} {
		w, _ := c.w.(interface{ Write([]byte) (int, error) })
		if got, err := ParseFormat(c.env, w); err != nil || got != c.want {
			t.Errorf("ParseFormat(%q, %T) = %q, %v; want %q", c.env, c.w, got, err, c.want)
		}
	}
	if _, err := ParseFormat("pretty", pipeW); err == nil {
		t.Error("ParseFormat accepted pretty")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		if got, _ := ParseFormat("", tty); got != FormatText {
			t.Errorf("a terminal gets %q, want text", got)
		}
		tty.Close()
	}

	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo, FormatText).Info("listening", "addr", "127.0.0.1:8080")
	if !regexp.MustCompile(`^time=\d\d:\d\d:\d\d\.\d{3} level=INFO msg=listening addr=127\.0\.0\.1:8080\n$`).
		MatchString(buf.String()) {
		t.Errorf("text line: %q", buf.String())
	}
}
