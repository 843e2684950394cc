package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/pmapi/pmapi"
)

// check says whether err is nil when ok, and otherwise a validation error
// naming field.
func check(t *testing.T, name string, err error, ok bool, field string) {
	t.Helper()
	if ok {
		if err != nil {
			t.Errorf("%s: %v; want no error", name, err)
		}
		return
	}
	var e *pmapi.Error
	if !errors.As(err, &e) || e.Code != pmapi.CodeValidation || e.Details["field"] != field {
		t.Errorf("%s: %#v; want a validation error naming %s", name, err, field)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		s  string
		ok bool
	}{
		"one character": {"a", true},
		"at the limit":  {strings.Repeat("é", 5), true},
		"padded":        {" a ", true},
		"empty":         {"", false},
		"blank":         {" \t\n", false},
		"over":          {strings.Repeat("é", 6), false},
		"NUL":           {"a\x00b", false},
	} {
		check(t, name, Text("body", c.s, 5), c.ok, "body")
	}
}

func TestOptional(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for name, c := range map[string]struct {
		s  *string
		ok bool
	}{
		"absent":       {nil, true},
		"empty":        {s(""), true},
		"at the limit": {s(strings.Repeat("é", 5)), true},
		"over":         {s(strings.Repeat("é", 6)), false},
		"NUL":          {s("\x00"), false},
	} {
		check(t, name, Optional("ownerHint", c.s, 5), c.ok, "ownerHint")
	}
}

func TestTitleTrims(t *testing.T) {
	t.Parallel()
	got, err := Title("  Fix the press  ", 20)
	if got != "Fix the press" || err != nil {
		t.Errorf("Title = %q, %v; want the trimmed title", got, err)
	}
	_, err = Title("   ", 20)
	check(t, "blank title", err, false, "title")
}

func TestOneOf(t *testing.T) {
	t.Parallel()
	allowed := []string{"LOW", "HIGH"}
	check(t, "allowed", OneOf("severity", "HIGH", allowed), true, "")
	err := OneOf("severity", "high", allowed)
	check(t, "other case", err, false, "severity")
	var e *pmapi.Error
	if errors.As(err, &e) && strings.Join(e.Details["allowed"].([]string), ",") != "LOW,HIGH" {
		t.Errorf("details.allowed = %v; want LOW, HIGH", e.Details["allowed"])
	}
}
