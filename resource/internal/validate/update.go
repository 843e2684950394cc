package validate

import (
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// An update tells three cases of a field apart by has (does the body name
// it?): absent keeps the stored value (the change is nil), null clears it
// where the field allows that, and a value is read and checked.

// Given reads an update's field that cannot be cleared: nil when absent, 400
// naming field when null, else read's value of the one given.
func Given[T, U any](has func(string) bool, field string, v *T, read func(T) (U, error)) (*U, error) {
	if v == nil {
		if has(field) {
			return nil, pmapi.Invalid(field, "%s cannot be null", field)
		}
		return nil, nil
	}
	return change(read(*v))
}

// Nullable reads an update's field that null clears: nil when absent, else
// read's value of the one given, null included.
func Nullable[T, U any](has func(string) bool, field string, v T, read func(T) (U, error)) (*U, error) {
	if !has(field) {
		return nil, nil
	}
	return change(read(v))
}

// TitleAndDescription reads the title and the description of an update of a
// titled item (a task, a risk, an action item), title first, as InProject
// reads them for a create: the title cannot be cleared, null clears the
// description, and a value given passes the resource's own check.
func TitleAndDescription(
	has func(string) bool,
	title, desc *string,
	checkTitle func(string) (string, error),
	checkDesc func(*string) error,
) (*string, **string, error) {
	t, err := Given(has, "title", title, checkTitle)
	if err != nil {
		return t, nil, err
	}
	d, err := Nullable(has, "description", desc, Checked(checkDesc))
	return t, d, err
}

func change[U any](u U, err error) (*U, error) {
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// Checked makes a check a reader for Given and Nullable: the value as given,
// once check passes.
func Checked[T any](check func(T) error) func(T) (T, error) {
	return func(v T) (T, error) { return v, check(v) }
}

// AsIs reads a value that needs no check here (a status the store checks
// against the stored one, a date).
func AsIs[T any](v T) (T, error) { return v, nil }

// User is OptionalUser as a reader for Nullable: null clears the user.
func User(field string) func(*string) (*uuid.UUID, error) {
	return func(s *string) (*uuid.UUID, error) { return OptionalUser(field, s) }
}

// Set writes an update's change into a field: *dst = *v when v is given; a
// nil v (left out of the request) leaves the field as it is.
func Set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
