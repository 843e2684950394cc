package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pmapi/pmapi/jobs"
)

// quieter lowers to debug the info lines a person running pmapi dev does not
// need: River's own (always, when all is set), every line while the demo seed
// and the jobs it caused run (seeding), and the periodic housekeeping jobs that
// completed. PMAPI_LOG_LEVEL=debug shows them again; warnings and errors are
// never touched.
type quieter struct {
	slog.Handler
	all     bool
	seeding *atomic.Bool
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && (q.all || q.seeding.Load() || housekeeping(r)) {
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler {
	return quieter{Handler: q.Handler.WithAttrs(as), all: q.all, seeding: q.seeding}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{Handler: q.Handler.WithGroup(name), all: q.all, seeding: q.seeding}
}

// housekeepingKinds run on a timer (the event sweeper every minute) and say
// nothing worth a line when they succeed.
var housekeepingKinds = map[string]bool{jobs.MaintenanceArgs{}.Kind(): true, jobs.SweepArgs{}.Kind(): true,
	jobs.RetentionArgs{}.Kind(): true}

func housekeeping(r slog.Record) bool {
	if r.Message != "job" {
		return false
	}
	kind, completed := false, false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "kind":
			kind = housekeepingKinds[a.Value.String()]
		case "outcome":
			completed = a.Value.String() == "completed"
		}
		return true
	})
	return kind && completed
}

// lineLog turns what the database harness writes (plain text lines) into
// log lines, so they share the format of everything else.
type lineLog struct {
	log *slog.Logger
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // an unfinished line waits for its end
			return len(p), nil
		}
		if line = strings.TrimSpace(line); line != "" {
			l.log.Info(line)
		}
	}
}
