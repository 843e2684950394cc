package search_test

import (
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/search"
)

var sources = []facet.Search{
	{Type: "project", Scope: "projects:read"},
	{Type: "task", Scope: "tasks:read"},
	{Type: "note", Scope: "notes:read"},
}

func reads(scopes ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range scopes {
			if x == s {
				return true
			}
		}
		return false
	}
}

func TestChooseReadsWhatTheKeyMay(t *testing.T) {
	t.Parallel()
	got, err := search.Choose(sources, "", reads("tasks:read", "notes:read"))
	if err != nil || len(got) != 2 || got[0].Type != "task" || got[1].Type != "note" {
		t.Errorf("default types: %v %v", got, err)
	}
	if _, err := search.Choose(sources, "", reads()); pmapi.ErrorCode(err) != pmapi.CodeInsufficientScope {
		t.Errorf("a key that reads nothing: %v", err)
	}
	got, err = search.Choose(sources, "task, task,note", reads("tasks:read", "notes:read"))
	if err != nil || len(got) != 2 {
		t.Errorf("named types are deduplicated: %v %v", got, err)
	}
	if _, err := search.Choose(sources, "project", reads("tasks:read")); pmapi.ErrorCode(
		err,
	) != pmapi.CodeInsufficientScope {
		t.Errorf("a named type the key cannot read is refused: %v", err)
	}
	_, err = search.Choose(sources, "milestone", reads("tasks:read"))
	if e := pmapi.AsError(err); e.Code != pmapi.CodeValidation || e.Details["field"] != "types" {
		t.Errorf("an unknown type: %v", err)
	}
}

func TestValidQueryTrimsAndBounds(t *testing.T) {
	t.Parallel()
	if q, err := search.ValidQuery("  pump  "); err != nil || q != "pump" {
		t.Errorf("%q %v", q, err)
	}
	for _, bad := range []string{"", "   ", string(make([]rune, search.MaxQueryLength+1))} {
		if _, err := search.ValidQuery(bad); pmapi.ErrorCode(err) != pmapi.CodeValidation {
			t.Errorf("%q accepted", bad)
		}
	}
}
