package project_test

import (
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
	"github.com/pmapi/pmapi/resource/project"
)

func TestParseUpdateTellsNullFromAbsent(t *testing.T) {
	t.Parallel()
	has := validatetest.Has
	id := pmapi.FormatID(project.IDPrefix, pmapi.NewID())
	for _, field := range []string{"name", "ragStatus"} {
		_, _, err := project.ParseUpdate(project.UpdateRequest{ID: id}, has(field))
		if validatetest.Field(err) != field {
			t.Errorf("null %s: %v; want VALIDATION_FAILED naming it", field, err)
		}
	}
	_, f, err := project.ParseUpdate(project.UpdateRequest{ID: id}, has("description", "ownerId", "startDate"))
	if err != nil || f.Description == nil || *f.Description != nil || f.OwnerID == nil || *f.OwnerID != nil ||
		f.StartDate == nil || *f.StartDate != nil || f.TargetDate != nil || f.Name != nil {
		t.Errorf("null description, owner and start date clear them, absent fields stay: %+v %v", f, err)
	}
}
