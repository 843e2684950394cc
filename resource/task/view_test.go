package task

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/storekit/rowjsontest"
)

// TestTaskJSONIsView: the list page's and the detail's tasks, written from
// their wire values, are the view's JSON, with every field set and with
// every nullable one null.
func TestTaskJSONIsView(t *testing.T) {
	desc := "<b>Seal</b> & \"bearing\"\n\u2028 caf\xc3"
	a, r := uuid.New(), uuid.New()
	paris := time.FixedZone("CET", 3600)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, paris)
	due := time.Date(2026, 2, 3, 4, 5, 6, 120_000_000, time.UTC)
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_000, paris)
	now := time.Now().Truncate(time.Microsecond)
	rows := []Task{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "Replace the <motor>", Description: &desc,
			Status: InProgress, Priority: 5, AssigneeID: &a, ReporterID: &r, StartDate: &start, DueDate: &due,
			CreatedAt: now, UpdatedAt: now.In(paris), ArchivedAt: &archived},
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "", Status: Todo, Priority: 1,
			CreatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC)},
	}
	rowjsontest.Same(t, viewJSON, rows, func(t Task) []any {
		return []any{t.ID, t.ProjectID, t.Title, t.Description, t.Status, t.Priority, t.AssigneeID, t.ReporterID,
			t.StartDate, t.DueDate, t.CreatedAt, t.UpdatedAt, t.ArchivedAt}
	}, ToView)
}
