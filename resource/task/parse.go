package task

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
)

// Has reports whether a request body names a field at its top level, to tell
// an absent field (leave it alone) from a null one (clear it).
type Has = func(field string) bool

// ParseCreate turns a decoded create body into a validated NewTask. A missing
// projectId is a bad request; a malformed one names no project (404).
func ParseCreate(req CreateRequest, has Has) (NewTask, error) {
	in := NewTask{
		Description: req.Description,
		Priority:    DefaultPriority,
		StartDate:   micro(req.StartDate),
		DueDate:     micro(req.DueDate),
	}
	var err error
	in.Title, err = validate.InProject(req.ProjectID, req.Title, req.Description, ValidTitle, ValidDescription)
	if err != nil {
		return in, err
	}
	if req.Priority != nil {
		in.Priority = int(*req.Priority)
	} else if has("priority") {
		return in, pmapi.Invalid("priority", "priority cannot be null; leave it out for the default 3")
	}
	if in.AssigneeID, err = validate.OptionalUser("assigneeId", req.AssigneeID); err != nil {
		return in, err
	}
	if in.ReporterID, err = validate.OptionalUser("reporterId", req.ReporterID); err != nil {
		return in, err
	}
	if err := ValidDates(in.StartDate, in.DueDate); err != nil {
		return in, err
	}
	in.ProjectID, err = project.ParseID(req.ProjectID)
	return in, err
}

// ParseUpdate turns a decoded update body into the task's id and validated
// changes. Whether a status move is allowed depends on the stored status, so
// the store checks that.
func ParseUpdate(req UpdateRequest, has Has) (uuid.UUID, Changes, error) {
	var ch Changes
	if err := validate.Required("taskId", req.TaskID); err != nil {
		return uuid.Nil, ch, err
	}
	var err error
	checkStatus := validate.Checked(func(s string) error { return ValidStatus("status", s) })
	if ch.Status, err = validate.Given(has, "status", req.Status, checkStatus); err != nil {
		return uuid.Nil, ch, err
	}
	ch.Title, ch.Description, err = validate.TitleAndDescription(has, req.Title, req.Description,
		ValidTitle, ValidDescription)
	if err != nil {
		return uuid.Nil, ch, err
	}
	asInt := func(p Priority) (int, error) { return int(p), nil }
	if ch.Priority, err = validate.Given(has, "priority", req.Priority, asInt); err != nil {
		return uuid.Nil, ch, err
	}
	if ch.AssigneeID, err = validate.Nullable(has, "assigneeId", req.AssigneeID, validate.User("assigneeId")); err != nil {
		return uuid.Nil, ch, err
	}
	if ch.ReporterID, err = validate.Nullable(has, "reporterId", req.ReporterID, validate.User("reporterId")); err != nil {
		return uuid.Nil, ch, err
	}
	ch.StartDate, _ = validate.Nullable(has, "startDate", micro(req.StartDate), validate.AsIs)
	ch.DueDate, _ = validate.Nullable(has, "dueDate", micro(req.DueDate), validate.AsIs)
	id, err := ParseID(req.TaskID)
	return id, ch, err
}

// ParseIDRequest reads the task named by an archive or restore body.
func ParseIDRequest(req IDRequest) (uuid.UUID, error) {
	if err := validate.Required("taskId", req.TaskID); err != nil {
		return uuid.Nil, err
	}
	return ParseID(req.TaskID)
}

// micro cuts a timestamp to what PostgreSQL stores, so that comparing a
// requested value with the stored one is exact.
func micro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := t.Truncate(time.Microsecond)
	return &m
}

// apply returns cur with ch applied, and checks what depends on both: the
// status move and the order of the dates.
func apply(cur Task, ch Changes) (Task, error) {
	next := cur
	if ch.Status != nil {
		if err := CheckTransition(cur.Status, *ch.Status); err != nil {
			return cur, err
		}
		next.Status = *ch.Status
	}
	validate.Set(&next.Title, ch.Title)
	validate.Set(&next.Description, ch.Description)
	validate.Set(&next.Priority, ch.Priority)
	validate.Set(&next.AssigneeID, ch.AssigneeID)
	validate.Set(&next.ReporterID, ch.ReporterID)
	validate.Set(&next.StartDate, ch.StartDate)
	validate.Set(&next.DueDate, ch.DueDate)
	return next, ValidDates(next.StartDate, next.DueDate)
}

// same reports whether two versions of a task hold the same fields, so an
// update that changes nothing writes nothing and emits nothing.
func same(a, b Task) bool {
	return a.Status == b.Status && a.Title == b.Title && eqPtr(a.Description, b.Description) && a.Priority == b.Priority &&
		eqPtr(
			a.AssigneeID,
			b.AssigneeID,
		) && eqPtr(a.ReporterID, b.ReporterID) && eqTime(a.StartDate, b.StartDate) && eqTime(a.DueDate, b.DueDate)
}

func eqPtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

func eqTime(a, b *time.Time) bool {
	return a == b || (a != nil && b != nil && a.Equal(*b))
}
