package project

import (
	"encoding/json"
	"time"

	"github.com/pmapi/pmapi"
)

// Date is a calendar date as the API writes it, "2026-03-31". Decoding rejects
// anything else, so a stored date is always valid.
type Date string

// UnmarshalJSON accepts only YYYY-MM-DD strings naming a real date.
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	// time.Parse takes year 0000, which PostgreSQL refuses.
	if t, err := time.Parse(time.DateOnly, s); err != nil || t.Year() < 1 {
		return pmapi.Errorf(pmapi.CodeValidation, "dates are written YYYY-MM-DD, from 0001-01-01, not %q", s)
	}
	*d = Date(s)
	return nil
}

// Time returns the date at midnight UTC.
func (d Date) Time() time.Time {
	t, _ := time.Parse(time.DateOnly, string(d))
	return t
}
