package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// A JSONLine writes what slog's JSON handler writes for the same record, and
// refuses (not OK) whatever it would write differently.
func TestJSONLineIsSlogs(t *testing.T) {
	india := time.FixedZone("IST", 5*3600+1800)
	times := []time.Time{
		time.Date(2026, 11, 25, 12, 34, 56, 789_654_321, time.UTC),
		time.Date(2026, 11, 25, 12, 34, 56, 0, time.UTC),
		time.Date(2026, 11, 25, 23, 59, 59, 999_999_999, india),
		time.Date(1999, 1, 2, 3, 4, 5, 1_000_000, time.Local),
	}
	plain := [][]slog.Attr{
		{
			slog.String("requestId", "req_abc.DEF:1-2_3"),
			slog.String("method", "GET"),
			slog.String("route", "/v1/workspaces/:ws/tasks"),
			slog.Int("status", 200),
			slog.Float64("latencyMs", 1.234),
		},
		{
			slog.String("route", "unmatched"),
			slog.Int("status", -1),
			slog.Float64("latencyMs", 0),
			slog.String("code", "NOT_FOUND"),
		},
		{
			slog.String("a", "<&>'{}"),
			slog.Float64("x", 123456.789),
			slog.Float64("y", 0.001),
			slog.Float64("z", 1e20),
			slog.String("e", ""),
		},
	}
	for _, at := range times {
		for _, attrs := range plain {
			var l JSONLine
			got, ok := writeLine(&l, at, attrs)
			if want := slogLine(t, at, attrs); !ok || string(got) != want {
				t.Errorf("JSONLine (OK %v)\n%s\nslog\n%s", ok, got, want)
			}
		}
	}
	escaped := [][]slog.Attr{
		{slog.String("requestId", `a"b`)}, {slog.String("route", `a\b`)}, {slog.String("m", "tab\there")},
		{slog.String("m", "é")}, {slog.String("m", "\x7f")}, {slog.String(`k"`, "v")},
		{slog.Float64("latencyMs", 1e-7)}, {slog.Float64("latencyMs", 1e21)},
		{slog.Bool("cached", true)}, {slog.Duration("took", time.Millisecond)}, {slog.Time("at", times[0])},
		{slog.Group("g", slog.String("k", "v"))}, {slog.Any("list", []int{1})},
	}
	for _, attrs := range escaped {
		var l JSONLine
		if got, ok := writeLine(&l, times[0], attrs); ok {
			t.Errorf("%v: OK, wrote %s where slog writes %s", attrs, got, slogLine(t, times[0], attrs))
		}
	}
}

func writeLine(l *JSONLine, at time.Time, attrs []slog.Attr) ([]byte, bool) {
	l.Start(at, slog.LevelInfo, "request")
	l.Attrs(attrs)
	return l.End()
}

func slogLine(t *testing.T, at time.Time, attrs []slog.Attr) string {
	var out bytes.Buffer
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(attrs...)
	if err := slog.NewJSONHandler(&out, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The JSON logger takes whole lines in order with its records; a logger
// made from it by With, or a text logger, is no LineWriter.
func TestJSONLoggerTakesLines(t *testing.T) {
	var out bytes.Buffer
	log := NewLogger(&out, slog.LevelInfo, FormatJSON)
	lw, ok := log.Handler().(LineWriter)
	if !ok {
		t.Fatal("the JSON logger's handler is no LineWriter")
	}
	log.Info("first")
	if err := lw.WriteLine([]byte("{\"msg\":\"second\"}\n")); err != nil {
		t.Fatal(err)
	}
	log.Info("third")
	if lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")); len(lines) != 3 ||
		!bytes.Contains(lines[1], []byte("second")) ||
		!bytes.Contains(lines[2], []byte("third")) {
		t.Errorf("lines out of order:\n%s", out.Bytes())
	}
	if _, ok := log.With("k", "v").Handler().(LineWriter); ok {
		t.Error("a logger With attributes takes lines without them")
	}
	if _, ok := NewLogger(&out, slog.LevelInfo, FormatText).Handler().(LineWriter); ok {
		t.Error("the text logger takes JSON lines")
	}
}

// Records and lines written at once from many goroutines come out whole,
// even on a writer that is not safe for concurrent use.
func TestJSONLoggerLinesWhole(t *testing.T) {
	var out bytes.Buffer
	log := NewLogger(&out, slog.LevelInfo, FormatJSON)
	lw := log.Handler().(LineWriter)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 200 {
				if g%2 == 0 {
					log.Info("record", "g", g)
				} else if err := lw.WriteLine([]byte("{\"msg\":\"line\"}\n")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	for _, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("a broken line: %q", l)
		}
	}
	if len(lines) != 800 {
		t.Errorf("%d lines, want 800", len(lines))
	}
}
