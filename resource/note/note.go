// Package note is the project-note resource: free text attached to a project,
// with its rules, JSON views (view.go), SQL (store.go) and routes (http.go).
package note

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// IDPrefix starts note ids in the API.
const IDPrefix = pmapi.NoteIDPrefix

// Note is a stored note.
type Note struct {
	ID        uuid.UUID
	ProjectID uuid.UUID
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewNote is a validated create.
type NewNote struct {
	ProjectID uuid.UUID
	Body      string
}

// ValidBody checks a note's text (1 to 20000 characters), kept as written.
func ValidBody(s string) (string, error) {
	return s, validate.Text("body", s, 20000)
}

// ParseID reads a note id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "note") }

// SearchSource makes notes findable by their text.
var SearchSource = facet.Search{
	Type: "note", Scope: "notes:read", Table: "notes", IDPrefix: IDPrefix,
	Title: "left(r.body, 120)", Body: "r.body", ProjectID: "r.project_id", Live: "true",
	// The title is the body's start: a trigram match of it is one of the body.
	Fuzzy: []string{"r.body"},
}
