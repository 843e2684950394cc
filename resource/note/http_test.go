package note_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestNotes(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	p1 := a.CreateProject(t, map[string]any{"name": "one"})["id"].(string)
	p2 := a.CreateProject(t, map[string]any{"name": "two"})["id"].(string)
	n1 := a.Do(t, "POST", apitest.NoteBase+"create",
		map[string]any{"projectId": p1, "body": "Kick-off: agreed the welding sequence"})
	if n1.Status != 201 || n1.Str("projectId") != p1 {
		t.Fatalf("create: %d %s", n1.Status, n1.Raw)
	}
	id := n1.Str("id")
	n2 := a.Do(t, "POST", apitest.NoteBase+"create",
		map[string]any{"projectId": p2, "body": "Supplier call"}).Str("id")
	for _, method := range []string{"POST", "PATCH"} {
		up := a.Do(t, method, apitest.NoteBase+"update",
			map[string]any{"noteId": id, "body": "Kick-off: welding sequence v2 (" + method + ")"})
		if up.Status != 201 || up.Str("body") != "Kick-off: welding sequence v2 ("+method+")" {
			t.Fatalf("%s update: %s", method, up.Raw)
		}
	}
	ids := a.Get(t, apitest.NoteBase+"list", map[string]string{"projectId": p2}).IDs()
	if !slices.Equal(ids, []string{n2}) {
		t.Errorf("projectId filter: %v", ids)
	}
	ids = a.Get(t, apitest.NoteBase+"list", map[string]string{"q": "WELDING"}).IDs()
	if !slices.Equal(ids, []string{id}) {
		t.Errorf("q filter: %v", ids)
	}
	if ids := a.Get(t, apitest.NoteBase+"list", nil).IDs(); !slices.Equal(ids, []string{n2, id}) {
		t.Errorf("all: %v", ids)
	}
	apitest.WantError(t, a.Do(t, "POST", apitest.NoteBase+"create", map[string]any{"projectId": p1, "body": " "}),
		400, "VALIDATION_FAILED")
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", apitest.NoteBase + "detail?id=" + id, nil},
		{"POST", apitest.NoteBase + "update", map[string]any{"noteId": id, "body": "mine"}},
		{"POST", apitest.NoteBase + "delete", map[string]any{"noteId": id}},
		{"POST", apitest.NoteBase + "create", map[string]any{"projectId": p1, "body": "into A"}},
	} {
		apitest.WantError(t, b.Do(t, tc.method, tc.path, tc.body), 404, "NOT_FOUND")
	}
	for _, q := range []map[string]string{nil, {"projectId": p1}, {"q": "welding"}} {
		if ids := b.Get(t, apitest.NoteBase+"list", q).IDs(); len(ids) != 0 {
			t.Errorf("B lists A's notes with %v: %v", q, ids)
		}
	}
	apitest.WantError(t, a.WithKey(a.NewKey(t, "notes:read")).Do(t, "POST", apitest.NoteBase+"delete",
		map[string]any{"noteId": id}), 403, "INSUFFICIENT_SCOPE")
	del := a.Do(t, "POST", apitest.NoteBase+"delete", map[string]any{"noteId": id})
	if del.Status != 201 || del.Data()["deleted"] != true {
		t.Fatalf("delete: %s", del.Raw)
	}
	apitest.WantError(t, a.Get(t, apitest.NoteBase+"detail", map[string]string{"id": id}), 404, "NOT_FOUND")
	var types []string
	for _, e := range a.Events(t) {
		if len(e.Type) > 5 && e.Type[:5] == "note." {
			types = append(types, e.Type)
		}
	}
	if !slices.Equal(types, []string{"note.created", "note.created", "note.updated", "note.updated", "note.deleted"}) {
		t.Errorf("note events %v", types)
	}
}
