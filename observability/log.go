package observability

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
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

// NewLogger writes one JSON object per line to w.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
