package observability

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
)

// ParseLevel reads PMAPI_LOG_LEVEL: debug, info (default), warn or error.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("PMAPI_LOG_LEVEL must be debug, info, warn or error, not %q", s)
}

// Format is how log lines are written: JSON for machines, text for a person.
type Format string

const (
	FormatJSON Format = "json"
	FormatText Format = "text"
)

// ParseFormat reads PMAPI_LOG_FORMAT. Unset, a terminal gets text and anything
// else (a pipe, a file, a container runtime) gets JSON, so `make run` reads
// well and `make run | tee log` or a Pod's log stays machine-readable.
func ParseFormat(s string, w io.Writer) (Format, error) {
	switch strings.ToLower(s) {
	case "json":
		return FormatJSON, nil
	case "text":
		return FormatText, nil
	case "":
		if f, ok := w.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
			return FormatText, nil
		}
		return FormatJSON, nil
	}
	return "", fmt.Errorf("PMAPI_LOG_FORMAT must be json or text, not %q", s)
}

// NewLogger writes one line per record to w: a JSON object, or slog's
// key=value text (logfmt) with the time of day only, since a person reading a
// terminal knows the date and wants the line short.
func NewLogger(w io.Writer, level slog.Level, format Format) *slog.Logger {
	if format == FormatText {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: shortTime}))
	}
	return slog.New(newJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
		return slog.String(slog.TimeKey, a.Value.Time().Format(time.TimeOnly+".000"))
	}
	return a
}
