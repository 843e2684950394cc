package task

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/jsonw/jsonwtest"
)

// TestTaskJSONIsView: the list page's tasks are the view's JSON, with every
// field set and with every nullable one null.
func TestTaskJSONIsView(t *testing.T) {
	desc := "<b>Seal</b> & \"bearing\"\n\u2028 caf\xc3"
	a, r := uuid.New(), uuid.New()
	paris := time.FixedZone("CET", 3600)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, paris)
	due := time.Date(2026, 2, 3, 4, 5, 6, 120_000_000, time.UTC)
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_789, paris)
	rows := []Task{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "Replace the <motor>", Description: &desc,
			Status: InProgress, Priority: 5, AssigneeID: &a, ReporterID: &r, StartDate: &start, DueDate: &due,
			CreatedAt: time.Now(), UpdatedAt: time.Now().In(paris), ArchivedAt: &archived},
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "", Status: Todo, Priority: 1,
			CreatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
	}
	jsonwtest.Same(t, rows, (*Task).AppendJSON, ToView)
}
