// Package risk is the risk resource: a project's issue-tracker entries (heavier
// than a task, lighter than an action item) with the status machine of spec
// section 3, their JSON views and their SQL.
package risk

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/search"
)

// IDPrefix starts risk ids in the API.
const IDPrefix = "rsk_"

// Statuses.
const (
	Open       = "OPEN"
	Mitigating = "MITIGATING"
	Resolved   = "RESOLVED"
)

// Statuses lists every status; Severities every severity.
var (
	Statuses   = []string{Open, Mitigating, Resolved}
	Severities = []string{"LOW", "MEDIUM", "HIGH", "CRITICAL"}
)

// transitions is the spec's table: OPEN -> MITIGATING|RESOLVED, MITIGATING ->
// RESOLVED|OPEN (a send-back), RESOLVED -> OPEN (reopen).
var transitions = map[string][]string{
	Open:       {Mitigating, Resolved},
	Mitigating: {Resolved, Open},
	Resolved:   {Open},
}

// CheckTransition refuses a move outside the table, a same-state move included.
func CheckTransition(from, to string) error {
	if !slices.Contains(Statuses, to) {
		return pmapi.Invalid("status", "status must be one of %s", strings.Join(Statuses, ", ")).With("allowed", Statuses)
	}
	if slices.Contains(transitions[from], to) {
		return nil
	}
	return pmapi.Errorf(pmapi.CodeInvalidTransition, "a risk cannot move from %s to %s", from, to).
		With("from", from).With("to", to).With("allowed", append([]string{}, transitions[from]...))
}

// Risk is a stored risk.
type Risk struct {
	ID          uuid.UUID
	ProjectID   uuid.UUID
	Title       string
	Description *string
	Severity    string
	Status      string
	OwnerID     *uuid.UUID
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ArchivedAt  *time.Time
}

// ValidTitle trims and checks a title.
func ValidTitle(s string) (string, error) {
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n < 1 || n > 300 {
		return "", pmapi.Invalid("title", "title must be 1 to 300 characters")
	}
	return s, nil
}

// ValidDescription allows up to 20000 characters.
func ValidDescription(d *string) error {
	if d != nil && utf8.RuneCountInString(*d) > 20000 {
		return pmapi.Invalid("description", "description must be at most 20000 characters")
	}
	return nil
}

// ValidSeverity checks a severity.
func ValidSeverity(s string) error {
	if !slices.Contains(Severities, s) {
		return pmapi.Invalid("severity", "severity must be one of %s", strings.Join(Severities, ", ")).With("allowed", Severities)
	}
	return nil
}

// ParseID reads a risk id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "risk") }

// SearchSource makes risks findable.
var SearchSource = search.Source{
	Type: "risk", Scope: "risks:read", Table: "risks", IDPrefix: IDPrefix,
	Title: "r.title", Body: "coalesce(r.description, '')", ProjectID: "r.project_id", Live: "r.archived_at is null",
}
