// Package task is the task resource: a project's work items with the status
// machine of docs/decisions/tasks-risks-notes.md, their JSON views, their SQL and
// their routes (http.go).
package task

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// IDPrefix starts task ids in the API.
const IDPrefix = pmapi.TaskIDPrefix

// Statuses of a task.
const (
	Todo       = "TODO"
	InProgress = "IN_PROGRESS"
	Blocked    = "BLOCKED"
	Review     = "REVIEW"
	Done       = "DONE"
)

// Statuses lists every status in the order of the spec's table.
var Statuses = []string{Todo, InProgress, Blocked, Review, Done}

// transitions is the status table of docs/decisions/tasks-risks-notes.md. A move to the same status is not in
// it, so it is refused like any other move outside the table.
var transitions = validate.Moves{What: "a task", Statuses: Statuses, Next: map[string][]string{
	Todo:       {InProgress, Blocked, Done},
	InProgress: {Review, Blocked, Todo},
	Review:     {Done, InProgress},
	Blocked:    {Todo, InProgress},
	Done:       {InProgress},
}}

// DefaultPriority is given to tasks created without one.
const DefaultPriority = 3

// Task is a stored task.
type Task struct {
	ID          uuid.UUID
	ProjectID   uuid.UUID
	Title       string
	Description *string
	Status      string
	Priority    int
	AssigneeID  *uuid.UUID
	ReporterID  *uuid.UUID
	StartDate   *time.Time
	DueDate     *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ArchivedAt  *time.Time
}

// NewTask is a validated create.
type NewTask struct {
	ProjectID   uuid.UUID
	Title       string
	Description *string
	Priority    int
	AssigneeID  *uuid.UUID
	ReporterID  *uuid.UUID
	StartDate   *time.Time
	DueDate     *time.Time
}

// Changes is a validated update; nil pointers are "not given", and a non-nil
// pointer to nil clears a nullable field.
type Changes struct {
	Status      *string
	Title       *string
	Description **string
	Priority    *int
	AssigneeID  **uuid.UUID
	ReporterID  **uuid.UUID
	StartDate   **time.Time
	DueDate     **time.Time
}

// ValidStatus checks a status value (not a move).
func ValidStatus(field, s string) error { return transitions.Valid(field, s) }

// Allowed returns the statuses a task in status from may move to.
func Allowed(from string) []string { return transitions.Allowed(from) }

// CheckTransition refuses a move outside the table with INVALID_TRANSITION,
// naming the move and what the task could have moved to instead.
func CheckTransition(from, to string) error { return transitions.Check(from, to) }

// ValidTitle trims and checks a task title.
func ValidTitle(title string) (string, error) { return validate.Title(title, 500) }

// ValidDescription allows up to 10000 characters.
func ValidDescription(d *string) error { return validate.Description(d, 10000) }

// ValidDates refuses a due date before the start date.
func ValidDates(start, due *time.Time) error {
	if start != nil && due != nil && due.Before(*start) {
		return pmapi.Invalid("dueDate", "dueDate must not be before startDate")
	}
	return nil
}

// ParseID reads a task id given in a request body or query: a malformed one
// names no task (404), as an absent one does.
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "task") }
