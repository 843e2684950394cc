// Package validate holds the field rules several resources share: titles,
// descriptions and optional user ids. Each resource names its own limits.
package validate

import (
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// Title trims a title and checks it holds 1 to max characters. PostgreSQL
// text cannot hold NUL; refusing it here keeps it a 400.
func Title(s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n < 1 || n > max {
		return "", pmapi.Invalid("title", "title must be 1 to %d characters", max)
	}
	if strings.ContainsRune(s, 0) {
		return "", pmapi.Invalid("title", "title must not contain NUL characters")
	}
	return s, nil
}

// Description allows an absent description or one of at most max characters
// without NUL.
func Description(d *string, max int) error {
	if d == nil {
		return nil
	}
	if utf8.RuneCountInString(*d) > max {
		return pmapi.Invalid("description", "description must be at most %d characters", max)
	}
	if strings.ContainsRune(*d, 0) {
		return pmapi.Invalid("description", "description must not contain NUL characters")
	}
	return nil
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
