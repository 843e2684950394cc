package quota

import (
	"testing"

	"github.com/pmapi/pmapi"
)

func TestValidateNamesTheQuotaOutOfRange(t *testing.T) {
	neg, huge, ok := int64(-1), int64(MaxLimit+1), int64(0)
	for _, c := range []struct {
		l     Limits
		field string
	}{
		{Limits{Apps: &neg}, "apps"},
		{Limits{KeysPerApp: &huge}, "keysPerApp"},
		{Limits{Webhooks: &neg}, "webhooks"},
		{Limits{RequestsPerMonth: &neg}, "requestsPerMonth"},
		{Limits{Apps: &ok, Webhooks: &ok}, ""},
		{Limits{}, ""},
	} {
		err := c.l.Validate()
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v refused: %v", c.l, err)
		case c.field != "" && (err == nil || pmapi.ErrorCode(err) != pmapi.CodeValidation ||
			pmapi.AsError(err).Details["field"] != c.field):
			t.Errorf("%+v: %v, want VALIDATION_FAILED on %s", c.l, err, c.field)
		}
	}
}

func TestExceededSaysWhichQuotaAndHowFull(t *testing.T) {
	e := pmapi.AsError(Exceeded(KeysPerApp, 3, 3))
	if e.Code != pmapi.CodeQuotaExceeded ||
		e.Details["quota"] != "keysPerApp" || e.Details["limit"] != int64(3) || e.Details["used"] != int64(3) {
		t.Errorf("Exceeded: %+v", e)
	}
}
