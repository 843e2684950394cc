// Package jsonw appends JSON values to a byte slice exactly as encoding/json
// writes them (HTML-safe strings, RFC 3339 times with trimmed nanoseconds,
// null for nil pointers), for the rows written straight from PostgreSQL's
// wire values on the hot read paths (storekit.RowJSON; docs/decisions.md,
// Reads): no reflection, no MarshalJSON call per time value, no allocation
// beyond the slice's growth.
package jsonw

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

const hexDigits = "0123456789abcdef"

// String appends s quoted as encoding/json quotes a string: <, > and & as
// \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// StringPtr appends *s, or null.
func StringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return String(b, *s)
}

// Time appends t as time.Time's MarshalJSON does (RFC 3339, nanoseconds with
// trailing zeros trimmed), in t's own location: callers pass UTC. Years
// outside 0-9999, which MarshalJSON refuses, cannot come from PostgreSQL's
// timestamps in pmapi's tables.
func Time(b []byte, t time.Time) []byte {
	b = append(b, '"')
	// AppendFormat has its own fast path for RFC 3339: a hand-written one
	// measured no faster (BenchmarkTime).
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// Int appends n.
func Int(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// UUID appends id quoted in its canonical text (what uuid.UUID.String gives),
// or null.
func UUID(b []byte, id *uuid.UUID) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(b, '"')
}
