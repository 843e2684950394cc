package authz

import (
	"strings"
	"testing"
)

func TestAPIKeyChecksum(t *testing.T) {
	for i := 0; i < 1000; i++ {
		k := NewAPIKey()
		if len(k) != KeyLength || !strings.HasPrefix(k, "pmk_") || !CheckAPIKey(k) {
			t.Fatalf("fresh key %q fails its own check", k)
		}
		// Any single-character change is caught.
		pos := 4 + i%(KeyLength-4)
		c := k[pos]
		repl := byte('a')
		if c == 'a' {
			repl = 'b'
		}
		mutated := k[:pos] + string(repl) + k[pos+1:]
		if CheckAPIKey(mutated) {
			t.Fatalf("mutated key %q passes (changed position %d)", mutated, pos)
		}
	}
	for _, bad := range []string{
		"", "pmk_", "pmk_" + strings.Repeat("a", 38), "xxx_" + strings.Repeat("a", 38),
		NewAPIKey() + "a", "pmk_" + strings.Repeat("!", 38),
	} {
		if CheckAPIKey(bad) {
			t.Errorf("%q passes", bad)
		}
	}
}

func TestScopes(t *testing.T) {
	s, err := ParseScopes("scopes", []string{"tasks:read", "projects:write", "tasks:read"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "projects:write,tasks:read" {
		t.Errorf("names %s", got)
	}
	if !s.Has(Scope("tasks:read")) || s.Has(Scope("tasks:write")) {
		t.Error("Has is wrong")
	}
	if m := s.Missing(Scope("tasks:read") | Scope("risks:read")); len(m) != 1 || m[0] != "risks:read" {
		t.Errorf("missing %v", m)
	}
	if _, err := ParseScopes("scopes", []string{"tasks:admin"}); err == nil {
		t.Error("unknown scope accepted")
	}
	if len(AllScopes().Names()) != 14 {
		t.Errorf("AllScopes has %d names", len(AllScopes().Names()))
	}
	if scopesFromDB([]string{"retired:scope", "notes:read"}) != Scope("notes:read") {
		t.Error("stored unknown scopes must grant nothing")
	}
}
