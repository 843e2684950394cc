package pmapi

import (
	"strings"
	"testing"
)

func TestNewClientIDFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewClientID()
		if !LooksLikeClientID(id) {
			t.Fatalf("%q does not look like a client id", id)
		}
		if seen[id] {
			t.Fatalf("duplicate client id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "pm_cli_", "pm_cli_0123456789012345678", "pm_cli_01234567890123456789x", "pm_key_01234567890123456789", "pm_cli_0123456789012345678-"} {
		if LooksLikeClientID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRandomBase62UsesWholeAlphabet(t *testing.T) {
	s := RandomBase62(20000)
	for _, c := range base62 {
		if !strings.ContainsRune(s, c) {
			t.Errorf("character %q never drawn in 20000", c)
		}
	}
}

func TestErrorHelpers(t *testing.T) {
	e := Invalid("name", "name is %s", "bad").With("max", 200)
	if e.Code != CodeValidation || e.Details["field"] != "name" || e.Details["max"] != 200 || e.Message != "name is bad" {
		t.Errorf("got %+v", e)
	}
	if ErrorCode(NotFound("task")) != CodeNotFound || ErrorCode(errString("x")) != CodeInternal {
		t.Error("ErrorCode misreads codes")
	}
	if AsError(errString("boom")).Cause == nil {
		t.Error("AsError drops the foreign cause")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
