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

// The prefixes of the resources' ids. They are written here, in the leaf every
// package imports, so a package names another's ids without importing it
// (action items name the analysis, node and suggestion they came from, and the
// analysis package imports action items), and the API core reads a query
// parameter given as an id by the noun it is tagged with (`id:"project"`).
// Each resource package re-exports its own as IDPrefix.
const (
	ProjectIDPrefix          = "prj_"
	TaskIDPrefix             = "tsk_"
	RiskIDPrefix             = "rsk_"
	NoteIDPrefix             = "not_"
	ActionItemIDPrefix       = "act_"
	ActionItemLogIDPrefix    = "log_"
	RRCAIDPrefix             = "rca_"
	RRCANodeIDPrefix         = "nod_"
	CorrectiveActionIDPrefix = "cac_"
	SuggestionIDPrefix       = "lac_"
	SuggestionRunIDPrefix    = "run_"
)

// idPrefixByNoun names each resource's prefix by the noun its errors use
// ("project not found", "projectId must be a project id (prj_...)").
var idPrefixByNoun = map[string]string{
	"project":     ProjectIDPrefix,
	"task":        TaskIDPrefix,
	"risk":        RiskIDPrefix,
	"note":        NoteIDPrefix,
	"action item": ActionItemIDPrefix,
	"analysis":    RRCAIDPrefix,
}

// IDPrefixOf is the prefix of the ids of noun, and whether noun names one.
func IDPrefixOf(noun string) (string, bool) {
	p, ok := idPrefixByNoun[noun]
	return p, ok
}

// FormatOptionalID renders an optional id: nil stays nil.
func FormatOptionalID(prefix string, id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := FormatID(prefix, *id)
	return &s
}

// FormatOptionalUserID renders an optional user id: user ids are plain UUIDs,
// not prefixed; nil stays nil.
func FormatOptionalUserID(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// ParseOptionalID reads an optional id with parse (a resource's ParseID): nil
// stays nil.
func ParseOptionalID(parse func(string) (uuid.UUID, error), s *string) (*uuid.UUID, error) {
	if s == nil {
		return nil, nil
	}
	id, err := parse(*s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}
