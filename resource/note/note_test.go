package note

import (
	"strings"
	"testing"

	"github.com/pmapi/pmapi"
)

func TestValidBody(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "   ", strings.Repeat("é", 20001)} {
		if _, err := ValidBody(bad); pmapi.ErrorCode(err) != pmapi.CodeValidation {
			t.Errorf("body of %d characters: %v", len([]rune(bad)), err)
		}
	}
	if b, err := ValidBody(" kept as written "); err != nil || b != " kept as written " {
		t.Errorf("body %q %v", b, err)
	}
}

func TestParseIDIsNotFoundWhenMalformed(t *testing.T) {
	t.Parallel()
	id := pmapi.NewID()
	if got, err := ParseID(pmapi.FormatID(IDPrefix, id)); err != nil || got != id {
		t.Errorf("round trip: %v %v", got, err)
	}
	for _, bad := range []string{"", "not_x", pmapi.FormatID("tsk_", id)} {
		if _, err := ParseID(bad); pmapi.ErrorCode(err) != pmapi.CodeNotFound {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
