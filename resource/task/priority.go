package task

import (
	"bytes"
	"math"
	"strconv"

	"github.com/pmapi/pmapi"
)

// Priority is a task priority as a request gives it. The spec calls it an
// "integer-like number 1 to 5": any JSON number equal to a whole number in range
// (3, 3.0, 3e0) is taken, and a string such as "3" is refused even though it
// reads as one, because a client sending strings has a bug worth hearing about.
type Priority int

// UnmarshalJSON applies the rule above; encoding/json sets a *Priority to nil
// for a JSON null without calling it, so callers see null as "given, nil".
func (p *Priority) UnmarshalJSON(b []byte) error {
	n, err := ParsePriority(b)
	if err != nil {
		return err
	}
	*p = Priority(n)
	return nil
}

// ParsePriority reads one JSON value as a priority.
func ParsePriority(raw []byte) (int, error) {
	bad := pmapi.Invalid("priority", "priority must be a whole number from 1 (highest) to 5")
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || f < 1 || f > 5 {
		return 0, bad
	}
	return int(f), nil
}
