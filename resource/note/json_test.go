package note

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/jsonw/jsonwtest"
)

// TestNoteJSONIsView: the list page's notes are the view's JSON.
func TestNoteJSONIsView(t *testing.T) {
	rows := []Note{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Body: "Met the <supplier> & agreed\n\"dates\"",
			CreatedAt: time.Now(), UpdatedAt: time.Date(2026, 3, 4, 5, 6, 7, 120_000_000, time.FixedZone("CET", 3600))},
	}
	jsonwtest.Same(t, rows, (*Note).AppendJSON, ToView)
}
