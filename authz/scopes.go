package authz

import (
	"math/bits"
	"sort"
	"strings"

	"github.com/pmapi/pmapi"
)

// Scopes is a set of scope names as a bitmask: checking a request's scope is one
// AND, and a key's effective scopes are its own ANDed with its app's.
type Scopes uint32

// The scopes of DESIGN.md section 4, in a fixed order (the bit positions).
var scopeNames = []string{
	"projects:read", "projects:write",
	"tasks:read", "tasks:write",
	"risks:read", "risks:write",
	"action-items:read", "action-items:write",
	"rrca:read", "rrca:write",
	"notes:read", "notes:write",
	"webhooks:read", "webhooks:write",
}

var scopeBits = func() map[string]Scopes {
	m := make(map[string]Scopes, len(scopeNames))
	for i, n := range scopeNames {
		m[n] = 1 << i
	}
	return m
}()

// AllScopes is every scope there is.
var AllScopes = Scopes(1<<len(scopeNames) - 1)

// AllScopeNames lists every scope name, for documentation and the dev seed.
func AllScopeNames() []string { return append([]string(nil), scopeNames...) }

// Scope returns the bit of one scope name; it panics on an unknown name, so a typo
// in the route table fails at start-up.
func Scope(name string) Scopes {
	s, ok := scopeBits[name]
	if !ok {
		panic("unknown scope " + name)
	}
	return s
}

// ParseScopes reads scope names from a request; unknown ones are 400 naming field.
func ParseScopes(field string, names []string) (Scopes, error) {
	var s Scopes
	var unknown []string
	for _, n := range names {
		b, ok := scopeBits[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		s |= b
	}
	if len(unknown) > 0 {
		return 0, pmapi.Invalid(field, "unknown scope %s; scopes are %s", strings.Join(unknown, ", "), strings.Join(scopeNames, ", ")).
			With("unknown", unknown)
	}
	return s, nil
}

// Names lists the scopes of s in the canonical order.
func (s Scopes) Names() []string {
	out := make([]string, 0, bits.OnesCount32(uint32(s)))
	for i, n := range scopeNames {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Has reports whether s holds every scope of want.
func (s Scopes) Has(want Scopes) bool { return s&want == want }

// Missing lists the scopes of want that s lacks.
func (s Scopes) Missing(want Scopes) []string { return (want &^ s).Names() }

// scopesFromDB reads a stored text[]; names no longer known are dropped, so a
// retired scope can never grant anything.
func scopesFromDB(names []string) Scopes {
	var s Scopes
	for _, n := range names {
		s |= scopeBits[n]
	}
	return s
}

// SortedNames is Names in lexical order (stable output for lists of names).
func (s Scopes) SortedNames() []string {
	n := s.Names()
	sort.Strings(n)
	return n
}
