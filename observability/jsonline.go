package observability

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// A LineWriter is the handler of a logger NewLogger made for JSON. Besides
// slog's records it takes whole lines a JSONLine wrote in the same format,
// for the access log: slog's handler spent about 1 µs a request on its
// attribute walk and json.Marshal of the latency, of a list page's 60 to 80
// µs (docs/decisions/reads.md).
type LineWriter interface {
	slog.Handler
	WriteLine(line []byte) error
}

// jsonHandler is slog's JSON handler plus WriteLine; both write under one
// lock, so lines never interleave on a writer that is not safe for
// concurrent use. (slog formats a record before taking its own lock; here
// its other lines are formatted under this one too, which only the rare
// lines that are not the access log's wait for.) A handler made from it by
// WithAttrs or WithGroup is slog's own, and takes no lines.
type jsonHandler struct {
	*slog.JSONHandler
	w  io.Writer
	mu *sync.Mutex
}

func newJSONHandler(w io.Writer, opts *slog.HandlerOptions) jsonHandler {
	return jsonHandler{JSONHandler: slog.NewJSONHandler(w, opts), w: w, mu: new(sync.Mutex)}
}

func (h jsonHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.JSONHandler.Handle(ctx, r)
}

func (h jsonHandler) WriteLine(line []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(line)
	return err
}

// A JSONLine writes one record byte for byte as slog's JSON handler does
// (TestJSONLineIsSlogs), for values that need no escaping: a value that
// does (a quote, a backslash, a control or non-ASCII byte) or a float JSON
// would write with an exponent makes the line not OK, and the caller logs
// the record through slog instead. Reset it before each record.
type JSONLine struct {
	B  []byte
	ok bool
}

// Start begins the record: its time (RFC 3339 to the nanosecond, in the
// time's own zone), level and message.
func (l *JSONLine) Start(t time.Time, level slog.Level, msg string) {
	l.ok = true
	l.B = append(l.B[:0], `{"time":"`...)
	if y := t.Year(); y < 0 || y >= 10000 {
		l.ok = false // slog adds an error to the line
	}
	l.B = t.Round(0).AppendFormat(l.B, time.RFC3339Nano)
	l.B = append(l.B, `","level":"`...)
	l.B = append(l.B, level.String()...)
	l.B = append(l.B, `","msg":`...)
	l.quoted(msg)
}

// String adds a string attribute.
func (l *JSONLine) String(key, val string) {
	l.key(key)
	l.quoted(val)
}

// Int adds an integer attribute.
func (l *JSONLine) Int(key string, n int) {
	l.key(key)
	l.B = strconv.AppendInt(l.B, int64(n), 10)
}

// Float adds a float attribute as json.Marshal writes it, which is how slog
// writes floats; only the plain notation is written here.
func (l *JSONLine) Float(key string, f float64) {
	l.key(key)
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) {
		l.ok = false
		return
	}
	l.B = strconv.AppendFloat(l.B, f, 'f', -1, 64)
}

// Attrs adds attributes: strings, integers and floats. Any other kind
// (a bool, a duration, a time, a group) slog writes in its own form, so it
// makes the line not OK and the record goes through slog.
func (l *JSONLine) Attrs(attrs []slog.Attr) {
	for _, a := range attrs {
		switch a.Value.Kind() {
		case slog.KindString:
			l.String(a.Key, a.Value.String())
		case slog.KindInt64:
			l.Int(a.Key, int(a.Value.Int64()))
		case slog.KindFloat64:
			l.Float(a.Key, a.Value.Float64())
		default:
			l.ok = false
		}
	}
}

// End closes the record with its newline and tells whether it is slog's.
func (l *JSONLine) End() ([]byte, bool) {
	l.B = append(l.B, '}', '\n')
	return l.B, l.ok
}

func (l *JSONLine) key(k string) {
	l.B = append(l.B, ',')
	l.quoted(k)
	l.B = append(l.B, ':')
}

func (l *JSONLine) quoted(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			l.ok = false
			return
		}
	}
	l.B = append(l.B, '"')
	l.B = append(l.B, s...)
	l.B = append(l.B, '"')
}
