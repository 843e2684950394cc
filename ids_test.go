package pmapi

import (
	"strings"
	"testing"

	"github.com/google/uuid"
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
	for _, bad := range []string{
		"", "pm_cli_", "pm_cli_0123456789012345678", "pm_cli_01234567890123456789x",
		"pm_key_01234567890123456789", "pm_cli_0123456789012345678-",
	} {
		if LooksLikeClientID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRandomBase62UsesWholeAlphabet(t *testing.T) {
	s := RandomBase62(20000)
	for _, c := range Base62 {
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

func TestFormatAndParseID(t *testing.T) {
	id := NewID()
	s := FormatID("key_", id)
	if len(s) != 4+26 {
		t.Fatalf("%q has length %d", s, len(s))
	}
	back, err := ParseID("key_", s, "key")
	if err != nil || back != id {
		t.Fatalf("round trip: %v %v", back, err)
	}
	if strings.ToLower(s) != s {
		if got, err := ParseID("key_", "key_"+strings.ToLower(s[4:]), "key"); err != nil || got != id {
			t.Errorf("lower-case ULID not accepted: %v", err)
		}
	}
	for _, bad := range []string{"", "key_", "prj_" + s[4:], s + "0", "key_" + strings.Repeat("Z", 26)} {
		if _, err := ParseID("key_", bad, "key"); ErrorCode(err) != CodeNotFound {
			t.Errorf("ParseID(%q) = %v, want NOT_FOUND", bad, err)
		}
	}
	later := FormatID("key_", NewID())
	if later <= s {
		t.Errorf("ids are not time-ordered: %s then %s", s, later)
	}
}

func TestFormatOptionalUserIDKeepsThePlainUUID(t *testing.T) {
	t.Parallel()
	if FormatOptionalUserID(nil) != nil {
		t.Error("no user must stay null")
	}
	id := uuid.MustParse("0f8d3a52-5c1e-4c7a-9a55-2b1f6f3e7d10")
	if got := FormatOptionalUserID(&id); got == nil || *got != "0f8d3a52-5c1e-4c7a-9a55-2b1f6f3e7d10" {
		t.Errorf("FormatOptionalUserID = %v; want the UUID as written", got)
	}
}
