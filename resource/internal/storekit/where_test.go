package storekit

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestEscapeLikeMakesWildcardsLiteral(t *testing.T) {
	if got := EscapeLike(`50%_\`); got != `50\%\_\\` {
		t.Errorf("EscapeLike: %s", got)
	}
}

func TestWhereNamesTheWorkspaceFirstAndNumbersParameters(t *testing.T) {
	ws, id := uuid.New(), uuid.New()
	now := time.Now()
	w := NewWhere("t", ws)
	w.Equal("status", "")
	w.Equal("status", "OPEN")
	w.Equal("project_id", (*uuid.UUID)(nil))
	w.Equal("project_id", &id)
	w.Contains("a_b", "title", "t.description")
	w.Within("created_at", &now, nil)
	w.Live(false)
	w.Before(&id)
	limit := w.Arg(51)
	want := "t.workspace_id = $1 and t.status = $2 and t.project_id = $3" +
		" and (t.title ilike '%' || $4 || '%' or t.description ilike '%' || $5 || '%')" +
		" and t.created_at >= $6 and t.archived_at is null and t.id < $7"
	if w.SQL() != want || limit != "$8" {
		t.Errorf("got %s limit %s\nwant %s", w.SQL(), limit, want)
	}
	if args := w.Args(); len(args) != 8 || args[0] != ws || args[3] != `a\_b` || args[7] != 51 {
		t.Errorf("args %v", args)
	}
}
