package task

import (
	"errors"
	"testing"
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
)

// table is docs/decisions/tasks-risks-notes.md written out as the 25 from/to pairs, independently of
// the transitions map it checks.
var table = map[[2]string]bool{
	{Todo, InProgress}: true, {Todo, Blocked}: true, {Todo, Done}: true,
	{InProgress, Review}: true, {InProgress, Blocked}: true, {InProgress, Todo}: true,
	{Review, Done}: true, {Review, InProgress}: true,
	{Blocked, Todo}: true, {Blocked, InProgress}: true,
	{Done, InProgress}: true,
}

func TestTransitionTable(t *testing.T) {
	if pairs := validatetest.Transitions(t, Statuses, table, CheckTransition); pairs != 25 {
		t.Fatalf("%d pairs tried", pairs)
	}
	for _, from := range Statuses {
		for _, to := range Allowed(from) {
			if !table[[2]string{from, to}] {
				t.Errorf("Allowed(%s) names %s, which the spec does not", from, to)
			}
		}
	}
}

func TestAllowedIsACopy(t *testing.T) {
	a := Allowed(Todo)
	a[0] = Done
	if Allowed(Todo)[0] != InProgress {
		t.Fatal("Allowed exposes the table to its callers")
	}
}

func TestParsePriority(t *testing.T) {
	for raw, want := range map[string]int{"3": 3, "3.0": 3, "1": 1, "5": 5, "5.000": 5, "3e0": 3, " 2 ": 2, "0.3e1": 3} {
		if got, err := ParsePriority([]byte(raw)); err != nil || got != want {
			t.Errorf("%s: got %d %v, want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{
		"0", "6", "2.5", `"3"`, "null", "true", "-1", "1e400", "[3]", "{}", "", "5.0000001", "NaN", "Infinity",
	} {
		_, err := ParsePriority([]byte(raw))
		var e *pmapi.Error
		if !errors.As(err, &e) || e.Code != pmapi.CodeValidation || e.Details["field"] != "priority" {
			t.Errorf("%s: got %v, want VALIDATION_FAILED naming priority", raw, err)
		}
	}
}

var (
	has   = validatetest.Has
	field = validatetest.Field
)

func TestParseCreate(t *testing.T) {
	const prj = "prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0"
	in, err := ParseCreate(CreateRequest{ProjectID: prj, Title: "  x  "}, has("projectId", "title"))
	if err != nil || in.Title != "x" || in.Priority != DefaultPriority {
		t.Fatalf("minimal create: %+v %v", in, err)
	}
	start, due := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	bad := "bob"
	nul := "a\x00b"
	for name, tc := range map[string]struct {
		req   CreateRequest
		has   Has
		field string
	}{
		"no project":   {CreateRequest{Title: "x"}, has("title"), "projectId"},
		"blank title":  {CreateRequest{ProjectID: prj, Title: " "}, has("projectId", "title"), "title"},
		"NUL in title": {CreateRequest{ProjectID: prj, Title: "a\x00"}, has("projectId", "title"), "title"},
		"NUL in description": {
			CreateRequest{ProjectID: prj, Title: "x", Description: &nul},
			has("projectId", "title", "description"), "description",
		},
		"null priority": {CreateRequest{ProjectID: prj, Title: "x"}, has("projectId", "title", "priority"), "priority"},
		"bad assignee": {
			CreateRequest{ProjectID: prj, Title: "x", AssigneeID: &bad},
			has("projectId", "title", "assigneeId"), "assigneeId",
		},
		"bad reporter": {
			CreateRequest{ProjectID: prj, Title: "x", ReporterID: &bad},
			has("projectId", "title", "reporterId"), "reporterId",
		},
		"due before start": {
			CreateRequest{ProjectID: prj, Title: "x", StartDate: &start, DueDate: &due},
			has("projectId", "title", "startDate", "dueDate"), "dueDate",
		},
	} {
		if _, err := ParseCreate(tc.req, tc.has); field(err) != tc.field {
			t.Errorf("%s: got %v, want a bad %s", name, err, tc.field)
		}
	}
	if _, err := ParseCreate(CreateRequest{ProjectID: "prj_nope", Title: "x"}, has()); pmapi.ErrorCode(
		err,
	) != pmapi.CodeNotFound {
		t.Errorf("malformed project id: %v, want NOT_FOUND", err)
	}
}

func TestParseUpdateTellsAbsentFromNull(t *testing.T) {
	const tsk = "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"
	_, ch, err := ParseUpdate(UpdateRequest{TaskID: tsk}, has("taskId", "assigneeId", "dueDate"))
	if err != nil || ch.AssigneeID == nil || *ch.AssigneeID != nil || ch.DueDate == nil || *ch.DueDate != nil {
		t.Fatalf("null assignee and due date must clear them: %+v %v", ch, err)
	}
	if ch.ReporterID != nil || ch.StartDate != nil || ch.Description != nil || ch.Status != nil {
		t.Fatalf("absent fields must stay alone: %+v", ch)
	}
	for _, f := range []string{"status", "title", "priority"} {
		if _, _, err := ParseUpdate(UpdateRequest{TaskID: tsk}, has("taskId", f)); field(err) != f {
			t.Errorf("null %s: %v", f, err)
		}
	}
	bogus := "DOING"
	if _, _, err := ParseUpdate(UpdateRequest{TaskID: tsk, Status: &bogus}, has("taskId", "status")); field(
		err,
	) != "status" {
		t.Errorf("unknown status: %v", err)
	}
	if _, _, err := ParseUpdate(UpdateRequest{}, has()); field(err) != "taskId" {
		t.Errorf("no task id: %v", err)
	}
}

func TestApply(t *testing.T) {
	due := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cur := Task{Status: Todo, Title: "a", Priority: 3, DueDate: &due}
	done := Done
	next, err := apply(cur, Changes{Status: &done})
	if err != nil || next.Status != Done || same(cur, next) {
		t.Fatalf("allowed move: %+v %v", next, err)
	}
	review := Review
	if _, err := apply(cur, Changes{Status: &review}); pmapi.ErrorCode(err) != pmapi.CodeInvalidTransition {
		t.Fatalf("refused move: %v", err)
	}
	sameDue := due.In(time.FixedZone("x", 3600))
	p := &sameDue
	if next, _ := apply(cur, Changes{DueDate: &p}); !same(cur, next) {
		t.Error("the same instant in another zone counts as a change")
	}
	afterDue := due.Add(time.Hour)
	moved := &afterDue
	if _, err := apply(cur, Changes{StartDate: &moved}); field(err) != "dueDate" {
		t.Errorf("start moved past the due date: %v", err)
	}
}
