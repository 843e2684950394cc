package authz

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pmapi/pmapi"
)

// Scopes is a set of scope names as a bitmask: checking a request's scope is one
// AND, and a key's effective scopes are its own ANDed with its app's.
type Scopes uint32

// maxScopes is how many scopes the bitmask holds.
const maxScopes = 32

// scopeTable is the known scopes: names in definition order (the bit
// positions and the canonical order of Names) and each name's bit. A table is
// never changed once published; DefineScopes publishes a larger copy.
type scopeTable struct {
	names []string
	bits  map[string]Scopes
}

var (
	known    atomic.Pointer[scopeTable]
	defineMu sync.Mutex
)

func init() { known.Store(&scopeTable{bits: map[string]Scopes{}}) }

func table() *scopeTable { return known.Load() }

// DefineScopes makes names known scopes, each new one taking the next bit in
// the order given; names already known keep theirs, so defining the same list
// again (every server a process builds) changes nothing. The resources'
// registrations declare the scopes (api.New defines them), so no list lives
// here. A name must read `<resource>:<action>`.
func DefineScopes(names ...string) error {
	defineMu.Lock()
	defer defineMu.Unlock()
	cur := table()
	next := &scopeTable{
		names: append([]string(nil), cur.names...),
		bits:  make(map[string]Scopes, len(cur.bits)+len(names)),
	}
	for n, b := range cur.bits {
		next.bits[n] = b
	}
	for _, n := range names {
		if _, ok := next.bits[n]; ok {
			continue
		}
		if res, act, ok := strings.Cut(n, ":"); !ok || res == "" || act == "" || strings.ContainsAny(n, " \t") {
			return fmt.Errorf("scope %q is not <resource>:<action>", n)
		}
		if len(next.names) == maxScopes {
			return fmt.Errorf("scope %q: no room for more than %d scopes", n, maxScopes)
		}
		next.bits[n] = 1 << len(next.names)
		next.names = append(next.names, n)
	}
	known.Store(next)
	return nil
}

// KnownScope reports whether name is a defined scope.
func KnownScope(name string) bool {
	_, ok := table().bits[name]
	return ok
}

// AllScopes is every defined scope.
func AllScopes() Scopes { return Scopes(1<<len(table().names) - 1) }

// AllScopeNames lists every defined scope name, for documentation and the dev seed.
func AllScopeNames() []string { return append([]string(nil), table().names...) }

// Scope returns the bit of one scope name; it panics on an unknown name, so a
// typo in a route table fails at start-up (api.New checks every operation's
// scope before it asks).
func Scope(name string) Scopes {
	s, ok := table().bits[name]
	if !ok {
		panic("unknown scope " + name)
	}
	return s
}

// ParseScopes reads scope names from a request; unknown ones are 400 naming field.
func ParseScopes(field string, names []string) (Scopes, error) {
	t := table()
	var s Scopes
	var unknown []string
	for _, n := range names {
		b, ok := t.bits[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		s |= b
	}
	if len(unknown) > 0 {
		return 0, pmapi.Invalid(field, "unknown scope %s; scopes are %s",
			strings.Join(unknown, ", "), strings.Join(t.names, ", ")).
			With("unknown", unknown)
	}
	return s, nil
}

// Names lists the scopes of s in the canonical order.
func (s Scopes) Names() []string {
	t := table()
	out := make([]string, 0, bits.OnesCount32(uint32(s)))
	for i, n := range t.names {
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
	t := table()
	var s Scopes
	for _, n := range names {
		s |= t.bits[n]
	}
	return s
}

// SortedNames is Names in lexical order (stable output for lists of names).
func (s Scopes) SortedNames() []string {
	n := s.Names()
	sort.Strings(n)
	return n
}
