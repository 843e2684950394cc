// Package risk is the risk resource: a project's issue-tracker entries (heavier
// than a task, lighter than an action item) with their status machine
// (docs/decisions/tasks-risks-notes.md), JSON views, SQL and routes (http.go).
package risk

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// IDPrefix starts risk ids in the API.
const IDPrefix = pmapi.RiskIDPrefix

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
var transitions = validate.Moves{What: "a risk", Statuses: Statuses, Next: map[string][]string{
	Open:       {Mitigating, Resolved},
	Mitigating: {Resolved, Open},
	Resolved:   {Open},
}}

// CheckTransition refuses a move outside the table, a same-state move included.
func CheckTransition(from, to string) error { return transitions.Check(from, to) }

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
func ValidTitle(s string) (string, error) { return validate.Title(s, 300) }

// ValidDescription allows up to 20000 characters.
func ValidDescription(d *string) error { return validate.Description(d, 20000) }

// ValidSeverity checks a severity.
func ValidSeverity(s string) error { return validate.OneOf("severity", s, Severities) }

// ParseID reads a risk id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "risk") }

// SearchSource makes risks findable.
var SearchSource = facet.Search{
	Type: "risk", Scope: "risks:read", Table: "risks", IDPrefix: IDPrefix,
	Title: "r.title", Body: "coalesce(r.description, '')", ProjectID: "r.project_id", Live: "r.archived_at is null",
	Fuzzy:  []string{"r.title", "r.description"},
	Status: "r.status", Statuses: Statuses,
}
