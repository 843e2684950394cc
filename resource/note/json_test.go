package note

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/storekit/rowjsontest"
)

// TestNoteJSONIsView: the list page's notes, written from their wire values,
// are the view's JSON.
func TestNoteJSONIsView(t *testing.T) {
	rows := []Note{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Body: "Met the <supplier> & agreed\n\"dates\"",
			CreatedAt: time.Now().
				Truncate(time.Microsecond),
			UpdatedAt: time.Date(2026, 3, 4, 5, 6, 7, 120_000_000, time.Local)},
	}
	rowjsontest.Same(
		t,
		viewJSON,
		rows,
		func(n Note) []any { return []any{n.ID, n.ProjectID, n.Body, n.CreatedAt, n.UpdatedAt} },
		ToView,
	)
}
