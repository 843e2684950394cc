package task

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
)

// View is a task in the API and in event payloads.
type View struct {
	ID          string     `json:"id" example:"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ProjectID   string     `json:"projectId" example:"prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	Title       string     `json:"title" example:"Replace the conveyor motor"`
	Description *string    `json:"description"`
	Status      string     `json:"status" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE"`
	Priority    int        `json:"priority" minimum:"1" maximum:"5" doc:"1 is the highest"`
	AssigneeID  *string    `json:"assigneeId" format:"uuid"`
	ReporterID  *string    `json:"reporterId" format:"uuid"`
	StartDate   *time.Time `json:"startDate"`
	DueDate     *time.Time `json:"dueDate"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	ArchivedAt  *time.Time `json:"archivedAt"`
}

// ToView converts a stored task for the API.
func ToView(t Task) View {
	return View{
		ID: pmapi.FormatID(IDPrefix, t.ID), ProjectID: pmapi.FormatID(project.IDPrefix, t.ProjectID),
		Title: t.Title, Description: t.Description, Status: t.Status, Priority: t.Priority,
		AssigneeID: pmapi.FormatOptionalUserID(t.AssigneeID), ReporterID: pmapi.FormatOptionalUserID(t.ReporterID),
		StartDate: utc(t.StartDate), DueDate: utc(t.DueDate),
		CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), ArchivedAt: utc(t.ArchivedAt),
	}
}

// viewJSON writes a task's View from the row columns reads, straight from
// its wire values (storekit.RowJSON): the list page and the detail answer
// (api.ListRows, api.DetailRow; TestTaskJSONIsView).
var viewJSON = storekit.NewRowJSON(
	storekit.ID("id", "id", IDPrefix), storekit.ID("project_id", "projectId", project.IDPrefix),
	storekit.Text("title", "title"), storekit.Text("description", "description").OrNull(),
	storekit.Text("status", "status"), storekit.Int("priority", "priority"),
	storekit.UUID("assignee_id", "assigneeId").OrNull(), storekit.UUID("reporter_id", "reporterId").OrNull(),
	storekit.TimeUTC("start_date", "startDate").OrNull(), storekit.TimeUTC("due_date", "dueDate").OrNull(),
	storekit.TimeUTC("created_at", "createdAt"), storekit.TimeUTC("updated_at", "updatedAt"),
	storekit.TimeUTC("archived_at", "archivedAt").OrNull())

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// List is a page of tasks.
type List api.PageOf[View]

// CreateRequest is the body of task creation. New tasks start in TODO.
type CreateRequest struct {
	ProjectID   string     `json:"projectId" example:"prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0" doc:"The project the task belongs to (it may be archived)"`
	Title       string     `json:"title" example:"Replace the conveyor motor"`
	Description *string    `json:"description,omitempty"`
	Priority    *Priority  `json:"priority,omitempty" minimum:"1" maximum:"5" doc:"A whole number from 1 (highest) to 5; 3 and 3.0 are both accepted; default 3" nullable:"false"`
	AssigneeID  *string    `json:"assigneeId,omitempty" format:"uuid" doc:"A user of the workspace"`
	ReporterID  *string    `json:"reporterId,omitempty" format:"uuid" doc:"A user of the workspace"`
	StartDate   *time.Time `json:"startDate,omitempty" doc:"RFC 3339 timestamp"`
	DueDate     *time.Time `json:"dueDate,omitempty" doc:"RFC 3339 timestamp, not before startDate"`
}

// UpdateRequest changes a task: absent fields stay, null clears a nullable one.
type UpdateRequest struct {
	TaskID      string     `json:"taskId" example:"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	Status      *string    `json:"status,omitempty" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE" doc:"A move allowed by the transition table (emits task.status_changed); others are 400 INVALID_TRANSITION" nullable:"false"`
	Title       *string    `json:"title,omitempty" nullable:"false"`
	Description *string    `json:"description,omitempty"`
	Priority    *Priority  `json:"priority,omitempty" minimum:"1" maximum:"5" nullable:"false"`
	AssigneeID  *string    `json:"assigneeId,omitempty" format:"uuid" doc:"A user of the workspace, or null to unassign (emits task.assigned)"`
	ReporterID  *string    `json:"reporterId,omitempty" format:"uuid"`
	StartDate   *time.Time `json:"startDate,omitempty"`
	DueDate     *time.Time `json:"dueDate,omitempty"`
}

// IDRequest names one task (archive, restore).
type IDRequest struct {
	TaskID string `json:"taskId" example:"tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
}

// StatusChangedEvent is the data of task.status_changed, fixed by the spec.
type StatusChangedEvent struct {
	TaskID string `json:"taskId"`
	From   string `json:"from" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE"`
	To     string `json:"to" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE"`
}

// AssignedEvent is the data of task.assigned: the previous and the new assignee.
type AssignedEvent struct {
	TaskID string  `json:"taskId"`
	From   *string `json:"from" format:"uuid" doc:"The previous assignee, null when the task had none"`
	To     *string `json:"to" format:"uuid" doc:"The new assignee, null when the task was unassigned"`
}

// DeletedEvent is the data of task.deleted (the project store emits it when a
// project is deleted with its tasks).
type DeletedEvent struct {
	TaskID    string `json:"taskId"`
	ProjectID string `json:"projectId"`
}

// BatchRequest documents the body of a task batch. Each operation is decoded
// strictly as the body of its own endpoint, less `op`.
type BatchRequest struct {
	Atomic     bool             `json:"atomic,omitempty" doc:"true: all operations in one transaction, all or nothing; default false: each in its own"`
	Operations []BatchOperation `json:"operations" minItems:"1" maxItems:"100"`
}

// BatchOperation is one operation of a batch: `op` and the body fields of that
// operation (create: those of task/create; update: those of task/update;
// archive and restore: taskId).
type BatchOperation struct {
	Op          string     `json:"op" enum:"create,update,archive,restore"`
	TaskID      *string    `json:"taskId,omitempty" doc:"update, archive, restore" nullable:"false"`
	ProjectID   *string    `json:"projectId,omitempty" doc:"create" nullable:"false"`
	Status      *string    `json:"status,omitempty" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE" doc:"update" nullable:"false"`
	Title       *string    `json:"title,omitempty" nullable:"false"`
	Description *string    `json:"description,omitempty"`
	Priority    *Priority  `json:"priority,omitempty" minimum:"1" maximum:"5" nullable:"false"`
	AssigneeID  *string    `json:"assigneeId,omitempty" format:"uuid"`
	ReporterID  *string    `json:"reporterId,omitempty" format:"uuid"`
	StartDate   *time.Time `json:"startDate,omitempty"`
	DueDate     *time.Time `json:"dueDate,omitempty"`
}

// BatchResponse answers a batch that was applied: every operation's result in
// order (with atomic=false some may have failed).
type BatchResponse struct {
	Atomic  bool          `json:"atomic"`
	Results []BatchResult `json:"results"`
}

// BatchResult is the outcome of one operation.
type BatchResult struct {
	Index   int        `json:"index" doc:"Position of the operation in the request, from 0"`
	Success bool       `json:"success"`
	Data    *View      `json:"data,omitempty" doc:"The task after the operation, when it succeeded"`
	Error   *ItemError `json:"error,omitempty" doc:"Why it failed, when it did"`
}

// ItemError is a failed operation's error: the shape of the error envelope's
// `error` without requestId. In an atomic batch that failed, the operations
// that were not the cause carry the code NOT_APPLIED.
type ItemError struct {
	Code    string         `json:"code" example:"INVALID_TRANSITION"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}
