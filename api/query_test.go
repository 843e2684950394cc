package api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

func TestQueryIDsTakeTheirPrefixFromTheirNoun(t *testing.T) {
	t.Parallel()
	type query struct {
		ProjectID *uuid.UUID `query:"projectId" id:"project"`
		OwnerID   *uuid.UUID `query:"ownerId"`
	}
	id := pmapi.NewID()
	decode := func(params map[string]string) (query, error) {
		var q query
		err := decodeQueryInto(
			reflect.ValueOf(&q).Elem(),
			func(name string) (string, bool) { v, ok := params[name]; return v, ok },
		)
		return q, err
	}
	q, err := decode(map[string]string{"projectId": pmapi.FormatID(pmapi.ProjectIDPrefix, id)})
	if err != nil || q.ProjectID == nil || *q.ProjectID != id {
		t.Fatalf("a project id: %v, %v", q.ProjectID, err)
	}
	for param, raw := range map[string]string{
		"projectId": pmapi.FormatID(pmapi.TaskIDPrefix, id), // another resource's id
		"ownerId":   pmapi.FormatID(pmapi.ProjectIDPrefix, id),
	} {
		_, err := decode(map[string]string{param: raw})
		if e := pmapi.AsError(err); err == nil || e.Code != pmapi.CodeValidation || e.Details["field"] != param {
			t.Errorf("%s=%s: %v, want VALIDATION_FAILED naming it", param, raw, err)
		}
	}
	_, err = decode(map[string]string{"projectId": "nope"})
	if want := "projectId must be a project id (prj_...)"; pmapi.AsError(err).Message != want {
		t.Errorf("message of %v, want %q", err, want)
	}
}

func TestAnIDOfAnUnknownNounFailsStartUp(t *testing.T) {
	t.Parallel()
	type query struct {
		MilestoneID *uuid.UUID `query:"milestoneId" id:"milestone"`
	}
	err := checkQuery(Operation{ID: "listThings", Query: query{}})
	if err == nil || !strings.Contains(err.Error(), `id:"milestone"`) || !strings.Contains(err.Error(), "listThings") {
		t.Errorf("checkQuery: %v, want the unknown noun and the operation named", err)
	}
	if err := checkQuery(Operation{ID: "listThings", Query: ListQuery{}}); err != nil {
		t.Errorf("paging alone: %v", err)
	}
}
