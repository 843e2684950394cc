// Package jsonw appends JSON values to a byte slice exactly as encoding/json
// writes them (HTML-safe strings, RFC 3339 times with trimmed nanoseconds,
// null for nil pointers), for the rows written straight from PostgreSQL's
// wire values on the hot read paths (storekit.RowJSON;
// docs/decisions/reads.md): no reflection, no MarshalJSON call per time value,
// no allocation beyond the slice's growth.
package jsonw

import (
	"math/bits"
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
		i += plainPrefix(s[i:])
		if i == len(s) {
			break
		}
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

// plainPrefix is how many bytes s starts with that String copies as they are
// (printable ASCII other than " \\ < > &), judged eight at a time: titles and
// descriptions are mostly such bytes, and a page's strings were a tenth of
// the list's CPU a byte at a time (docs/performance.md).
func plainPrefix(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(s); n += 8 {
		w := s[n : n+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// A byte of a word is zero exactly where haszero's high bit is set;
		// "below 0x20" is a zero after subtracting, and a high bit set means
		// the byte is not ASCII. '"' and '&' differ only in bit 0x04, '<'
		// and '>' only in 0x02, so clearing that bit tests both at once.
		special := x&highs | haszero(x^(ones*'\\')) | haszero((x^(ones*'"'))&^(ones*0x04)) |
			haszero((x^(ones*'<'))&^(ones*0x02)) | (x-ones*0x20)&^x&highs
		if special != 0 {
			return n + bits.TrailingZeros64(special)/8
		}
	}
	for ; n < len(s); n++ {
		if c := s[n]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			break
		}
	}
	return n
}

// haszero sets the high bit of each byte of x that is zero (and possibly of
// bytes above a zero one, which the caller never reads past the first).
func haszero(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x - ones) &^ x & highs
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
