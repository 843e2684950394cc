package project_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/project"
)

func TestParseUpdateTellsNullFromAbsent(t *testing.T) {
	t.Parallel()
	has := func(fields ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(fields, f) }
	}
	id := pmapi.FormatID(project.IDPrefix, pmapi.NewID())
	for _, field := range []string{"name", "ragStatus"} {
		_, _, err := project.ParseUpdate(project.UpdateRequest{ID: id}, has(field))
		if e := pmapi.AsError(err); e.Code != pmapi.CodeValidation || e.Details["field"] != field {
			t.Errorf("null %s: %v; want VALIDATION_FAILED naming it", field, err)
		}
	}
	_, f, err := project.ParseUpdate(project.UpdateRequest{ID: id}, has("description", "ownerId", "startDate"))
	if err != nil || f.Description == nil || *f.Description != nil || f.OwnerID == nil || *f.OwnerID != nil ||
		f.StartDate == nil || *f.StartDate != nil || f.TargetDate != nil || f.Name != nil {
		t.Errorf("null description, owner and start date clear them, absent fields stay: %+v %v", f, err)
	}
}
