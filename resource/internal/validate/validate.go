// Package validate holds the field rules several resources share: required
// and optional text, titles, descriptions, a value among allowed ones, optional
// user ids and status tables. Each resource names its own limits and moves.
package validate

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// Text checks a required text field: not blank, at most max characters, and
// no NUL (PostgreSQL text cannot hold it; refusing it here keeps it a 400). A
// field stored trimmed is given trimmed.
func Text(field, s string, max int) error {
	if strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > max {
		return pmapi.Invalid(field, "%s must be 1 to %d characters", field, max)
	}
	return noNUL(field, s)
}

// Required refuses a required field left out or empty (an id a parser reads
// later, after the other fields' checks, so that their 400s come before its
// 404).
func Required(field, s string) error {
	if s == "" {
		return pmapi.Invalid(field, "%s is required", field)
	}
	return nil
}

// Optional checks an optional text field: absent, or at most max characters
// without NUL.
func Optional(field string, s *string, max int) error {
	if s == nil {
		return nil
	}
	if utf8.RuneCountInString(*s) > max {
		return pmapi.Invalid(field, "%s must be at most %d characters", field, max)
	}
	return noNUL(field, *s)
}

func noNUL(field, s string) error {
	if strings.ContainsRune(s, 0) {
		return pmapi.Invalid(field, "%s must not contain NUL characters", field)
	}
	return nil
}

// InProject checks, in the order a create answers its first error, the
// fields a project's titled child (a task, a risk) opens with: projectId is
// required (read later, Required), then the title and the description pass
// the resource's own checks. It answers the title as checkTitle gives it.
func InProject(
	projectID, title string,
	desc *string,
	checkTitle func(string) (string, error),
	checkDesc func(*string) error,
) (string, error) {
	if err := Required("projectId", projectID); err != nil {
		return "", err
	}
	title, err := checkTitle(title)
	if err != nil {
		return "", err
	}
	return title, checkDesc(desc)
}

// Title trims a title and checks it holds 1 to max characters.
func Title(s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if err := Text("title", s, max); err != nil {
		return "", err
	}
	return s, nil
}

// Description allows an absent description or one of at most max characters.
func Description(d *string, max int) error { return Optional("description", d, max) }

// OneOf checks a value against the values a field allows: 400 naming field
// and listing them otherwise.
func OneOf(field, s string, allowed []string) error {
	if slices.Contains(allowed, s) {
		return nil
	}
	return pmapi.Invalid(field, "%s must be one of %s", field, strings.Join(allowed, ", ")).With("allowed", allowed)
}

// UserID reads a user id (a UUID) of a body field; a malformed one is 400
// naming the field.
func UserID(field, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, pmapi.Invalid(field, "%s must be a user id", field)
	}
	return id, nil
}

// OptionalUser reads an optional user id field: nil stays nil.
func OptionalUser(field string, s *string) (*uuid.UUID, error) {
	if s == nil {
		return nil, nil
	}
	id, err := UserID(field, *s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// Moves is a status table: every status, in order, and the statuses each may
// move to. A move to the same status is not in the table, so it is refused
// as any other move outside it is.
type Moves struct {
	What     string // what moves, as messages name it: "a task"
	Statuses []string
	Next     map[string][]string
}

// Valid checks a status value (not a move): 400 naming field otherwise.
func (m Moves) Valid(field, status string) error { return OneOf(field, status, m.Statuses) }

// Allowed returns the statuses from may move to, a copy.
func (m Moves) Allowed(from string) []string { return append([]string{}, m.Next[from]...) }

// Check refuses an unknown status (400 naming status) and a move outside the
// table: INVALID_TRANSITION naming the move and where from could go instead.
func (m Moves) Check(from, to string) error {
	if err := m.Valid("status", to); err != nil {
		return err
	}
	if slices.Contains(m.Next[from], to) {
		return nil
	}
	return pmapi.Errorf(pmapi.CodeInvalidTransition, "%s cannot move from %s to %s", m.What, from, to).
		With("from", from).With("to", to).With("allowed", m.Allowed(from))
}

// Entry is what a caller may write of an entry with a kind and a text (an
// action item's log entry, an analysis's node): one kind only the server
// writes, and the kinds and text length callers may use.
type Entry struct {
	ServerKind string   // refused with ServerWhy
	ServerWhy  string   // the message: who writes ServerKind, and what to do instead
	Kinds      []string // what callers may write
	TextField  string   // "message", "text"
	MaxText    int
}

// Check reads an entry's kind and text: the text trimmed.
func (e Entry) Check(kind, text string) (string, error) {
	if kind == e.ServerKind {
		return "", pmapi.Invalid("kind", "%s", e.ServerWhy)
	}
	if err := OneOf("kind", kind, e.Kinds); err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	return text, Text(e.TextField, text, e.MaxText)
}
