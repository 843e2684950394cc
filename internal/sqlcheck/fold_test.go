package sqlcheck

import (
	"reflect"
	"testing"
)

func TestStatementsFoldConstants(t *testing.T) {
	got, err := Statements("testdata/fold")
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		{"fold.go:12", "select t.id, t.title from tasks t where t.workspace_id = $1"},
		{"fold.go:15", "select t.id, t.title from tasks t where t.workspace_id = $1 and t.id = $2"},
		{"fold.go:16", "select t.id, t.title from " + Hole + " r where r.workspace_id = $1 limit 10"},
		{"fold.go:17", "select i.id, i.name from items i where " + Hole},
		{"fold.go:18", "select 1 from tasks where workspace_id = $1"},
		{"fold.go:20", "select 1 from tasks where workspace_id = $1"},
		{"fold.go:20", "select 1 from tasks where workspace_id = $1 for update"},
		{"fold.go:27", "update tasks set archived_at = null where workspace_id = $1"},
		{"fold.go:27", "update tasks set archived_at = now() where workspace_id = $1"},
		{"fold.go:28", "delete from notes where workspace_id = $1 and notes.id = $2%"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
