package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDevLogQuietsTheSeedAndHousekeeping: under pmapi dev, info lines of the
// seed's window, River's own and completed housekeeping jobs drop to debug;
// other lines, and warnings always, stay.
func TestDevLogQuietsTheSeedAndHousekeeping(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		out := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})
		seeding := &atomic.Bool{}
		log := slog.New(quieter{Handler: out, seeding: seeding})
		river := slog.New(quieter{Handler: out, all: true, seeding: seeding})

		seeding.Store(true)
		log.Info("request", "route", "/seed")
		log.With("component", "x").Warn("seed warning")
		seeding.Store(false)
		log.Info("request", "route", "/mine")
		log.Info("job", "kind", "event.sweep", "outcome", "completed")
		log.Info("job", "kind", "maintenance.sweep", "outcome", "completed")
		log.Warn("job", "kind", "event.sweep", "outcome", "failed")
		log.Info("job", "kind", "webhook.deliver", "outcome", "completed")
		river.With("client", "c").Info("River client started")

		got := buf.String()
		for _, want := range []string{
			"route=/mine",
			"seed warning",
			"kind=webhook.deliver",
			"level=WARN msg=job kind=event.sweep outcome=failed",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("at %v, %q is missing:\n%s", level, want, got)
			}
		}
		quiet := []string{
			"route=/seed",
			"kind=event.sweep outcome=completed",
			"kind=maintenance.sweep",
			"River client started",
		}
		for _, q := range quiet {
			if shown := strings.Contains(got, q); shown != (level == slog.LevelDebug) {
				t.Errorf("at %v, %q shown: %v\n%s", level, q, shown, got)
			}
			if level == slog.LevelDebug && strings.Contains(got, "level=INFO msg=\"River") {
				t.Errorf("River's line kept its info level:\n%s", got)
			}
		}
	}
}

// TestLineLogSplitsLines: the harness's text becomes one log line per line,
// however the writes cut it.
func TestLineLogSplitsLines(t *testing.T) {
	var buf bytes.Buffer
	l := &lineLog{log: slog.New(slog.NewTextHandler(&buf, nil))}
	_, _ = l.Write([]byte("postgres: one\npostgres: t"))
	_, _ = l.Write([]byte("wo\n\n"))
	if got := strings.Count(buf.String(), "level=INFO"); got != 2 ||
		!strings.Contains(buf.String(), `msg="postgres: two"`) {
		t.Errorf("%d lines:\n%s", got, buf.String())
	}
}
