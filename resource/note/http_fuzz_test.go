package note_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzNoteCreate(f *testing.F) {
	seeds := append([]string{`{"projectId":"$ID","body":"hello"}`, `{"projectId":"$ID","body":""}`,
		`{"projectId":"$ID"}`}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.NoteBase+"create", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
	})
}

func FuzzNoteUpdate(f *testing.F) {
	seeds := append([]string{
		`{"noteId":"$ID","body":"edited"}`, `{"noteId":"$ID","body":""}`, `{"noteId":"$ID","body":null}`,
		`{"noteId":"$ID"}`,
		`{"noteId":"not_00000000000000000000000000","body":"x"}`, `{"noteId":"$ID","body":"x","projectId":"$ID"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "PATCH", apitest.NoteBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		p := tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
		return tn.Do(t, "POST", apitest.NoteBase+"create", map[string]any{"projectId": p, "body": "fuzzed"}).Str("id")
	})
}
