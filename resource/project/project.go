// Package project is the project resource: its rules, its JSON views and its
// SQL. Projects hold tasks, risks, notes and members; deleting one (only once it
// is archived) removes them all.
package project

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/validate"
)

// IDPrefix starts project ids in the API.
const IDPrefix = pmapi.ProjectIDPrefix

// RAG statuses: the traffic-light health of a project.
const (
	Green = "GREEN"
	Amber = "AMBER"
	Red   = "RED"
)

// Member roles.
const (
	RoleOwner  = "OWNER"
	RoleMember = "MEMBER"
	RoleViewer = "VIEWER"
)

// Settings are a project's own fields, the ones a create sets and an update
// changes: a Project and a NewProject both hold them.
type Settings struct {
	Name        string
	Description *string
	OwnerID     *uuid.UUID
	RAGStatus   string
	StartDate   *Date
	TargetDate  *Date
}

// Project is a stored project.
type Project struct {
	ID uuid.UUID
	Settings
	Members    []Member
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ArchivedAt *time.Time
}

// Member is a user's place in a project.
type Member struct {
	UserID  uuid.UUID `json:"userId"`
	Role    string    `json:"role"`
	AddedAt time.Time `json:"addedAt"`
}

// Fields is a validated set of project fields; nil pointers are "not given".
type Fields struct {
	Name        *string
	Description **string
	OwnerID     **uuid.UUID
	RAGStatus   *string
	StartDate   **Date
	TargetDate  **Date
}

// ValidName trims and checks a project name.
func ValidName(name string) (string, error) {
	name = strings.TrimSpace(name)
	return name, validate.Text("name", name, 200)
}

// ValidDescription allows up to 10000 characters.
func ValidDescription(d *string) error { return validate.Description(d, 10000) }

// ValidRAG checks a RAG status.
func ValidRAG(field, s string) error { return validate.OneOf(field, s, []string{Green, Amber, Red}) }

// ValidRole checks a member role.
func ValidRole(s string) error {
	return validate.OneOf("role", s, []string{RoleOwner, RoleMember, RoleViewer})
}

// ValidDates refuses a target date before the start date.
func ValidDates(start, target *Date) error {
	if start != nil && target != nil && target.Time().Before(start.Time()) {
		return pmapi.Invalid("targetDate", "targetDate must not be before startDate")
	}
	return nil
}

// ParseID reads a project id given in a request body or query: a malformed one
// names no project (404), as an absent one does.
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "project") }

// SearchSource makes projects findable by name and description.
var SearchSource = facet.Search{
	Type: "project", Scope: "projects:read", Table: "projects", IDPrefix: IDPrefix,
	Title: "r.name", Body: "coalesce(r.description, '')", ProjectID: "r.id", Live: "r.archived_at is null",
	Fuzzy: []string{"r.name", "r.description"},
}
