// Package actionitem is the action-item resource: follow-ups with an owner hint
// and a due date, which may start outside any project and be attached to one
// later, and their append-only execution logs. Corrective actions and
// look-across suggestions of root-cause analyses create them.
package actionitem

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// Id prefixes (resource/ids).
const (
	IDPrefix    = pmapi.ActionItemIDPrefix
	LogIDPrefix = pmapi.ActionItemLogIDPrefix
)

// Statuses.
const (
	Open       = "OPEN"
	InProgress = "IN_PROGRESS"
	Done       = "DONE"
	Cancelled  = "CANCELLED"
)

// Statuses lists every status.
var Statuses = []string{Open, InProgress, Done, Cancelled}

// transitions is the status table: OPEN -> IN_PROGRESS|DONE|CANCELLED,
// IN_PROGRESS -> DONE|OPEN|CANCELLED, DONE -> IN_PROGRESS (reopen), CANCELLED -> OPEN.
var transitions = validate.Moves{What: "an action item", Statuses: Statuses, Next: map[string][]string{
	Open:       {InProgress, Done, Cancelled},
	InProgress: {Done, Open, Cancelled},
	Done:       {InProgress},
	Cancelled:  {Open},
}}

// Allowed lists the statuses reachable from from.
func Allowed(from string) []string { return transitions.Allowed(from) }

// CheckTransition refuses a move outside the table (a same-state move included).
func CheckTransition(from, to string) error { return transitions.Check(from, to) }

// ClosedStatuses are the statuses of an item that counts as finished (RRCA's
// VERIFY gate).
var ClosedStatuses = []string{Done, Cancelled}

// Sources.
const (
	SourceManual           = "MANUAL"
	SourceCorrectiveAction = "CORRECTIVE_ACTION"
	SourceLookAcross       = "LOOK_ACROSS"
)

// Log kinds.
const (
	LogNote         = "NOTE"
	LogProgress     = "PROGRESS"
	LogBlocker      = "BLOCKER"
	LogEvidence     = "EVIDENCE"
	LogStatusChange = "STATUS_CHANGE"
)

// LogKinds lists every log kind.
var LogKinds = []string{LogNote, LogProgress, LogBlocker, LogEvidence, LogStatusChange}

// Item is a stored action item: what its create gave, with its id, status
// and times.
type Item struct {
	ID uuid.UUID
	NewItem
	Status     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ArchivedAt *time.Time
}

// Log is one execution log entry.
type Log struct {
	ID           uuid.UUID
	ActionItemID uuid.UUID
	Kind         string
	Message      string
	Author       string
	CreatedAt    time.Time
}

// ValidTitle trims and checks a title.
func ValidTitle(s string) (string, error) { return validate.Title(s, 300) }

// ValidDescription allows up to 20000 characters.
func ValidDescription(d *string) error { return validate.Description(d, 20000) }

// ValidOwnerHint allows a free-text owner of up to 200 characters.
func ValidOwnerHint(h *string) error { return validate.Optional("ownerHint", h, 200) }

// ValidLog checks an execution log entry. STATUS_CHANGE entries are written by
// the server itself when the status moves, never by callers.
func ValidLog(kind, message string) (string, error) { return logEntry.Check(kind, message) }

var logEntry = validate.Entry{
	ServerKind: LogStatusChange,
	ServerWhy:  "STATUS_CHANGE entries are written by the server when the status changes",
	Kinds:      LogKinds[:4],
	TextField:  "message",
	MaxText:    10000,
}

// ParseID reads an action-item id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "action item") }

// Sort orders of the list.
var SortFields = map[string]string{
	"createdAt": "created_at",
	"updatedAt": "updated_at",
	"dueDate":   "due_date",
	"title":     "title",
}

// SearchSource makes action items findable.
var SearchSource = facet.Search{
	Type: "action-item", Scope: "action-items:read", Table: "action_items", IDPrefix: IDPrefix,
	Title: "r.title", Body: "coalesce(r.description, '') || ' ' || coalesce(r.owner_hint, '')",
	ProjectID: "r.project_id", Live: "r.archived_at is null",
	Fuzzy:  []string{"r.title", "r.description", "r.owner_hint"},
	Status: "r.status", Statuses: Statuses,
}
