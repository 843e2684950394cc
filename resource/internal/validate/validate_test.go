package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
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
	if validatetest.Field(err) != field {
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

func TestGivenAndNullableTellAbsentNullAndValue(t *testing.T) {
	t.Parallel()
	has := validatetest.Has
	title := func(s string) (string, error) { return Title(s, 5) }
	v := func(s string) *string { return &s }

	if got, err := Given(has(), "title", nil, title); got != nil || err != nil {
		t.Errorf("absent: %v %v; want no change", got, err)
	}
	_, err := Given(has("title"), "title", nil, title)
	check(t, "null title", err, false, "title")
	if got, err := Given(has("title"), "title", v(" ab "), title); err != nil || got == nil || *got != "ab" {
		t.Errorf("given: %v %v; want the read value", got, err)
	}
	_, err = Given(has("title"), "title", v("abcdef"), title)
	check(t, "title too long", err, false, "title")

	desc := Checked(func(d *string) error { return Description(d, 3) })
	if got, err := Nullable(has(), "description", v("x"), desc); got != nil || err != nil {
		t.Errorf("absent: %v %v; want no change", got, err)
	}
	if got, err := Nullable(has("description"), "description", nil, desc); err != nil || got == nil || *got != nil {
		t.Errorf("null: %v %v; want a change to null", got, err)
	}
	_, err = Nullable(has("description"), "description", v("long"), desc)
	check(t, "description too long", err, false, "description")
	_, err = Nullable(has("ownerId"), "ownerId", v("nobody"), User("ownerId"))
	check(t, "malformed owner", err, false, "ownerId")
}

// TestTitleAndDescriptionReadsAnUpdatesTwoTexts: absent is no change, a null
// title is refused, a null description clears it, and the title's error comes
// first.
func TestTitleAndDescriptionReadsAnUpdatesTwoTexts(t *testing.T) {
	t.Parallel()
	has := validatetest.Has
	title := func(s string) (string, error) { return Title(s, 5) }
	desc := func(d *string) error { return Description(d, 3) }
	v := func(s string) *string { return &s }

	if ti, d, err := TitleAndDescription(has(), nil, nil, title, desc); ti != nil || d != nil || err != nil {
		t.Errorf("absent: %v %v %v; want no change", ti, d, err)
	}
	_, _, err := TitleAndDescription(has("title"), nil, nil, title, desc)
	check(t, "null title", err, false, "title")
	_, _, err = TitleAndDescription(has("title", "description"), v("abcdef"), v("long"), title, desc)
	check(t, "bad title and description", err, false, "title")
	_, _, err = TitleAndDescription(has("title", "description"), v("ab"), v("long"), title, desc)
	check(t, "bad description", err, false, "description")
	ti, d, err := TitleAndDescription(has("title", "description"), v(" ab "), nil, title, desc)
	if err != nil || ti == nil || *ti != "ab" || d == nil || *d != nil {
		t.Errorf("title and null description: %v %v %v; want the trimmed title and a change to null", ti, d, err)
	}
}

func TestRequired(t *testing.T) {
	t.Parallel()
	check(t, "given", Required("taskId", "tsk_x"), true, "")
	check(t, "left out", Required("taskId", ""), false, "taskId")
}

// TestInProjectAnswersTheFirstErrorInOrder: projectId, then the title, then
// the description, so a create's 400 names the same field whichever resource
// it is.
func TestInProjectAnswersTheFirstErrorInOrder(t *testing.T) {
	t.Parallel()
	title := func(s string) (string, error) { return Title(s, 5) }
	desc := func(d *string) error { return Description(d, 3) }
	long := "long"
	_, err := InProject("", "", &long, title, desc)
	check(t, "all bad", err, false, "projectId")
	_, err = InProject("prj_x", "", &long, title, desc)
	check(t, "bad title and description", err, false, "title")
	_, err = InProject("prj_x", "ab", &long, title, desc)
	check(t, "bad description", err, false, "description")
	if got, err := InProject("prj_x", " ab ", nil, title, desc); err != nil || got != "ab" {
		t.Errorf("good: %q %v; want the trimmed title", got, err)
	}
}
