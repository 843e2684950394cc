package risk

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/storekit/rowjsontest"
)

// TestRiskJSONIsView: the list page's risks, written from their wire values,
// are the view's JSON, with every field set and with every nullable one null.
func TestRiskJSONIsView(t *testing.T) {
	desc, owner := "Supplier <late> & \"sealed\"\u2028", uuid.New()
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_000, time.Local)
	now := time.Now().Truncate(time.Microsecond)
	rows := []Risk{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "Seal <failure>", Description: &desc,
			Severity: "HIGH", Status: Mitigating, OwnerID: &owner, CreatedAt: now, UpdatedAt: now, ArchivedAt: &archived},
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "t", Severity: "LOW", Status: Open,
			CreatedAt: time.Date(
				2026,
				11,
				25,
				0,
				0,
				0,
				0,
				time.Local,
			), UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local)},
	}
	rowjsontest.Same(t, viewJSON, rows, func(r Risk) []any {
		return []any{
			r.ID,
			r.ProjectID,
			r.Title,
			r.Description,
			r.Severity,
			r.Status,
			r.OwnerID,
			r.CreatedAt,
			r.UpdatedAt,
			r.ArchivedAt,
		}
	}, ToView)
}
