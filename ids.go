package pmapi

import (
	"crypto/rand"
	"strings"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Base62 is the alphabet of RandomBase62 and of request ids.
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n characters drawn uniformly from the base62 alphabet with
// crypto/rand (rejection sampling keeps the draw unbiased).
func RandomBase62(n int) string {
	var b strings.Builder
	b.Grow(n)
	buf := make([]byte, n+n/2+8)
	for b.Len() < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			// 248 = 4*62: values above it would favour the first characters.
			if c < 248 {
				b.WriteByte(Base62[c%62])
				if b.Len() == n {
					break
				}
			}
		}
	}
	return b.String()
}

// ClientIDPrefix starts every client id (apps and workspace consoles).
const ClientIDPrefix = "pm_cli_"

// NewClientID returns a fresh client id: the prefix and 20 base62 characters.
func NewClientID() string { return ClientIDPrefix + RandomBase62(20) }

// LooksLikeClientID is a cheap syntactic check made before any database work.
func LooksLikeClientID(s string) bool {
	if len(s) != len(ClientIDPrefix)+20 || !strings.HasPrefix(s, ClientIDPrefix) {
		return false
	}
	for i := len(ClientIDPrefix); i < len(s); i++ {
		if strings.IndexByte(Base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

// NewID returns a fresh time-ordered id (UUIDv7): rows sort by creation in
// indexes and keyset pages.
func NewID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		panic("uuid: " + err.Error())
	}
	return id
}

// FormatID renders a stored id for the API: a type prefix such as "prj_" followed
// by the 128 bits as a 26-character ULID (Crockford base32), which keeps the
// time order visible and the text short.
func FormatID(prefix string, id uuid.UUID) string {
	return prefix + ulid.ULID(id).String()
}

// AppendID appends FormatID(prefix, id) quoted as a JSON string (the prefix
// and the ULID alphabet need no escaping), without the string FormatID
// allocates.
func AppendID(b []byte, prefix string, id uuid.UUID) []byte {
	b = append(b, '"')
	b = append(b, prefix...)
	n := len(b)
	b = append(b, make([]byte, ulid.EncodedSize)...)
	_ = ulid.ULID(id).MarshalTextTo(b[n:]) // cannot fail: the space is EncodedSize
	return append(b, '"')
}

// ParseID reads an id of the given prefix. Anything else, including an id of
// another type, is reported as not found: to the caller it names nothing.
func ParseID(prefix, s, what string) (uuid.UUID, error) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return uuid.Nil, NotFound(what)
	}
	u, err := ulid.ParseStrict(rest)
	if err != nil {
		return uuid.Nil, NotFound(what)
	}
	return uuid.UUID(u), nil
}
