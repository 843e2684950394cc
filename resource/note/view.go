package note

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/project"
)

// View is a note in the API and in event payloads.
type View struct {
	ID        string    `json:"id" example:"not_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ProjectID string    `json:"projectId"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ToView converts a stored note.
func ToView(n Note) View {
	return View{
		ID:        pmapi.FormatID(IDPrefix, n.ID),
		ProjectID: pmapi.FormatID(project.IDPrefix, n.ProjectID),
		Body:      n.Body,
		CreatedAt: n.CreatedAt,
		UpdatedAt: n.UpdatedAt,
	}
}

// List is a page of notes.
type List api.PageOf[View]

// CreateRequest adds a note to a project.
type CreateRequest struct {
	ProjectID string `json:"projectId"`
	Body      string `json:"body"`
}

// UpdateRequest rewrites a note.
type UpdateRequest struct {
	NoteID string `json:"noteId"`
	Body   string `json:"body"`
}

// IDRequest names one note.
type IDRequest struct {
	NoteID string `json:"noteId"`
}

// Deleted answers a delete.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted" enum:"true"`
}

// DeletedEvent is the data of note.deleted.
type DeletedEvent struct {
	NoteID    string `json:"noteId"`
	ProjectID string `json:"projectId"`
}
