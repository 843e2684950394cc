package authz

import (
	"testing"

	"github.com/pmapi/pmapi"
)

func TestValidateUser(t *testing.T) {
	cases := []struct {
		email, name, field string
	}{
		{"ada@example.com", "Ada", ""},
		{"Ada <ada@example.com>", "Ada", "email"},
		{"not-an-address", "Ada", "email"},
		{"", "Ada", "email"},
		{"ada@example.com", "   ", "name"},
		{"ada@example.com", string(make([]rune, 201)), "name"},
	}
	for _, c := range cases {
		err := ValidateUser(c.email, c.name)
		if c.field == "" {
			if err != nil {
				t.Errorf("%q/%q: %v", c.email, c.name, err)
			}
			continue
		}
		e := pmapi.AsError(err)
		if err == nil || e.Code != pmapi.CodeValidation || e.Details["field"] != c.field {
			t.Errorf("%q/%q: %v, want VALIDATION_FAILED on %s", c.email, c.name, err, c.field)
		}
	}
}
