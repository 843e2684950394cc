package actionitem

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/project"
)

// View is an action item in the API and in event payloads.
type View struct {
	ID                 string     `json:"id" example:"act_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	Title              string     `json:"title" example:"Add a torque check to the line 4 start-up list"`
	Description        *string    `json:"description"`
	Status             string     `json:"status" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	OwnerHint          *string    `json:"ownerHint" doc:"Free-text owner (a name, a team), not a user id"`
	ProjectID          *string    `json:"projectId" doc:"Null until attached to a project"`
	DueDate            *time.Time `json:"dueDate"`
	Source             string     `json:"source" enum:"MANUAL,CORRECTIVE_ACTION,LOOK_ACROSS"`
	SourceRRCAID       *string    `json:"sourceRrcaId" doc:"The analysis it came from (CORRECTIVE_ACTION, LOOK_ACROSS)"`
	SourceNodeID       *string    `json:"sourceNodeId" doc:"The root-cause node it corrects (CORRECTIVE_ACTION)"`
	SourceSuggestionID *string    `json:"sourceSuggestionId" doc:"The look-across suggestion that created it (LOOK_ACROSS)"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	ArchivedAt         *time.Time `json:"archivedAt"`
}

// ToView converts a stored item for the API.
func ToView(i Item) View {
	v := View{
		ID: pmapi.FormatID(
			IDPrefix,
			i.ID,
		), Title: i.Title, Description: i.Description, Status: i.Status, OwnerHint: i.OwnerHint,
		DueDate: i.DueDate, Source: i.Source, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, ArchivedAt: i.ArchivedAt,
	}
	v.ProjectID = pmapi.FormatOptionalID(project.IDPrefix, i.ProjectID)
	v.SourceRRCAID = pmapi.FormatOptionalID(pmapi.RRCAIDPrefix, i.SourceRRCAID)
	v.SourceNodeID = pmapi.FormatOptionalID(pmapi.RRCANodeIDPrefix, i.SourceNodeID)
	v.SourceSuggestionID = pmapi.FormatOptionalID(pmapi.SuggestionIDPrefix, i.SourceSuggestionID)
	return v
}

// List is a page of action items.
type List api.PageOf[View]

// LogView is an execution log entry.
type LogView struct {
	ID           string    `json:"id" example:"log_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ActionItemID string    `json:"actionItemId"`
	Kind         string    `json:"kind" enum:"NOTE,PROGRESS,BLOCKER,EVIDENCE,STATUS_CHANGE" enumName:"ActionItemLogKind"`
	Message      string    `json:"message"`
	Author       string    `json:"author" doc:"The client id that wrote it"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ToLogView converts a stored log entry.
func ToLogView(l Log) LogView {
	return LogView{ID: pmapi.FormatID(LogIDPrefix, l.ID), ActionItemID: pmapi.FormatID(IDPrefix, l.ActionItemID),
		Kind: l.Kind, Message: l.Message, Author: l.Author, CreatedAt: l.CreatedAt}
}

// LogList is a page of log entries, oldest first.
type LogList api.PageOf[LogView]

// CreateRequest is the body of action-item creation.
type CreateRequest struct {
	Title       string     `json:"title"`
	Description *string    `json:"description,omitempty"`
	OwnerHint   *string    `json:"ownerHint,omitempty"`
	ProjectID   *string    `json:"projectId,omitempty" doc:"Optional; attach later with attach-project"`
	DueDate     *time.Time `json:"dueDate,omitempty"`
}

// UpdateRequest changes an action item; absent fields stay, null clears.
type UpdateRequest struct {
	ActionItemID string     `json:"actionItemId"`
	Title        *string    `json:"title,omitempty" nullable:"false"`
	Description  *string    `json:"description,omitempty"`
	Status       *string    `json:"status,omitempty" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED" doc:"Moves by the status table; each move writes a STATUS_CHANGE log" nullable:"false"`
	OwnerHint    *string    `json:"ownerHint,omitempty"`
	DueDate      *time.Time `json:"dueDate,omitempty"`
}

// AttachRequest attaches an action item to a project.
type AttachRequest struct {
	ActionItemID string `json:"actionItemId"`
	ProjectID    string `json:"projectId"`
}

// IDRequest names one action item (archive, restore, delete).
type IDRequest struct {
	ActionItemID string `json:"actionItemId"`
}

// Deleted answers a delete.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted" enum:"true"`
}

// LogRequest is the body of a new execution log entry.
type LogRequest struct {
	Kind    string `json:"kind" enum:"NOTE,PROGRESS,BLOCKER,EVIDENCE" enumName:"ActionItemNewLogKind"`
	Message string `json:"message"`
}

// StatusEvent is the data of action-item.status_changed.
type StatusEvent struct {
	ActionItemID string `json:"actionItemId"`
	From         string `json:"from" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	To           string `json:"to" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
}

// DeletedEvent is the data of action-item.deleted.
type DeletedEvent struct {
	ActionItemID string  `json:"actionItemId"`
	ProjectID    *string `json:"projectId"`
}

// LoggedEvent is the data of action-item.logged.
type LoggedEvent struct {
	ActionItemID string  `json:"actionItemId"`
	Log          LogView `json:"log"`
}
