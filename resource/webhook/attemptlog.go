package webhook

import (
	"encoding/json"
	"strings"
	"time"
)

// logged is one attempt as a delivery row's attempt_log keeps it (migration
// 0017): the attempt log's members under the API's names, a null one left
// out. The delivery detail reads the rows of webhook_attempts, where attempts
// were kept before, in the same form (deliveryDetailSQL).
type logged struct {
	Attempt         int       `json:"attempt"`
	At              time.Time `json:"at"`
	Outcome         string    `json:"outcome"`
	StatusCode      *int      `json:"statusCode,omitempty"`
	LatencyMS       float64   `json:"latencyMs"`
	ResponseSnippet *string   `json:"responseSnippet,omitempty"`
	Error           *string   `json:"error,omitempty"`
}

// logged is the attempt as its delivery's log keeps it: its time to the
// microsecond, as a timestamptz column kept it, and its texts as jsonb takes
// them (logText).
func (a Attempt) logged() logged {
	r := a.Result
	l := logged{Attempt: a.Number, At: a.At.UTC().Truncate(time.Microsecond), Outcome: a.outcome(),
		LatencyMS: float64(r.Latency.Microseconds()) / 1000}
	if r.Status != 0 {
		l.StatusCode = &r.Status
	}
	if r.Snippet != "" {
		s := logText(r.Snippet)
		l.ResponseSnippet = &s
	}
	if r.Err != nil {
		s := logText(r.Err.Error())
		l.Error = &s
	}
	return l
}

// logJSON is the attempt as an attempt log of one entry.
func (a Attempt) logJSON() []byte {
	b, _ := json.Marshal([]logged{a.logged()}) // nothing in a logged fails to marshal
	return b
}

// logText makes a response's bytes or an error's text storable: jsonb refuses
// the NUL character (encoding/json already replaces invalid UTF-8), so an
// endpoint answering binary would otherwise fail the record of its attempt.
func logText(s string) string {
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// readLog appends to views the attempts of a stored log (nil: none).
func readLog(views []AttemptView, raw []byte) ([]AttemptView, error) {
	if raw == nil {
		return views, nil
	}
	var log []logged
	if err := json.Unmarshal(raw, &log); err != nil {
		return nil, err
	}
	for _, l := range log {
		// In the server's zone, as pgx scans a timestamptz, so the detail reads
		// the same whichever table kept the attempt.
		views = append(views, AttemptView{Attempt: l.Attempt, At: l.At.Local(), Outcome: l.Outcome, StatusCode: l.StatusCode,
			LatencyMS: l.LatencyMS, ResponseSnippet: l.ResponseSnippet, Error: l.Error})
	}
	return views, nil
}
