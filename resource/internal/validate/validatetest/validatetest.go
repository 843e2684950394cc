// Package validatetest holds the checks the resources' rule tests share.
package validatetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi"
)

// Transitions tries every move between statuses against table, a status
// table of docs/decisions (tasks, risks, action items) written out in the test independently of the
// code: a move in it passes check, any other is INVALID_TRANSITION naming the
// move and exactly the table's moves from there, and a status outside
// statuses is VALIDATION_FAILED naming status. It returns how many moves it
// tried.
func Transitions(t *testing.T, statuses []string, table map[[2]string]bool, check func(from, to string) error) int {
	t.Helper()
	pairs := 0
	for _, from := range statuses {
		var allowed []string
		for _, to := range statuses {
			if table[[2]string{from, to}] {
				allowed = append(allowed, to)
			}
		}
		for _, to := range statuses {
			pairs++
			err := check(from, to)
			if table[[2]string{from, to}] {
				if err != nil {
					t.Errorf("%s -> %s refused: %v", from, to, err)
				}
				continue
			}
			var e *pmapi.Error
			if !errors.As(err, &e) || e.Code != pmapi.CodeInvalidTransition {
				t.Errorf("%s -> %s: got %v, want INVALID_TRANSITION", from, to, err)
				continue
			}
			got, _ := e.Details["allowed"].([]string)
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			want := slices.Clone(allowed)
			slices.Sort(want)
			if e.Details["from"] != from || e.Details["to"] != to || !slices.Equal(sorted, want) {
				t.Errorf("%s -> %s: details %v, want from, to and allowed %v", from, to, e.Details, allowed)
			}
		}
	}
	var e *pmapi.Error
	if err := check(statuses[0], "NO_SUCH_STATUS"); !errors.As(err, &e) || e.Code != pmapi.CodeValidation ||
		e.Details["field"] != "status" {
		t.Errorf("an unknown status: %v, want VALIDATION_FAILED naming status", err)
	}
	return pairs
}

// Has answers what a request body answers a parser about which fields it
// names: fields and no others.
func Has(fields ...string) func(string) bool {
	return func(f string) bool { return slices.Contains(fields, f) }
}

// Field is the field a VALIDATION_FAILED error names; nil for any other error.
func Field(err error) any {
	var e *pmapi.Error
	if !errors.As(err, &e) || e.Code != pmapi.CodeValidation {
		return nil
	}
	return e.Details["field"]
}

// Entry tries a check of caller-written entries (validate.Entry): the kind
// only the server writes (refused with a message naming it) and an unknown
// kind are VALIDATION_FAILED naming kind, a text of a kind callers write comes back trimmed, and one over max
// characters is VALIDATION_FAILED naming textField.
func Entry(
	t *testing.T,
	check func(kind, text string) (string, error),
	serverKind, callerKind, textField string,
	max int,
) {
	t.Helper()
	// Its refusal says who writes it, not only which kinds callers may use.
	if _, err := check(serverKind, "x"); Field(err) != "kind" || !strings.Contains(err.Error(), serverKind+" ") {
		t.Errorf("callers wrote a %s entry: %v; want a refusal naming it", serverKind, err)
	}
	if _, err := check("GOSSIP", "x"); Field(err) != "kind" {
		t.Errorf("unknown kind: %v", err)
	}
	if got, err := check(callerKind, "  done  "); err != nil || got != "done" {
		t.Errorf("%s entry: %q %v; want the text trimmed", callerKind, got, err)
	}
	if _, err := check(callerKind, strings.Repeat("a", max+1)); Field(err) != textField {
		t.Errorf("a %s of %d characters: %v", textField, max+1, err)
	}
}
