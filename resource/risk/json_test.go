package risk

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/jsonw/jsonwtest"
)

// TestRiskJSONIsView: the list page's risks are the view's JSON, with every
// field set and with every nullable one null.
func TestRiskJSONIsView(t *testing.T) {
	desc, owner := "Supplier <late> & \"sealed\"\u2028", uuid.New()
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_789, time.FixedZone("CET", 3600))
	rows := []Risk{
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "Seal <failure>", Description: &desc,
			Severity: "HIGH", Status: Mitigating, OwnerID: &owner, CreatedAt: time.Now(), UpdatedAt: time.Now().UTC(), ArchivedAt: &archived},
		{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.Must(uuid.NewV7()), Title: "t", Severity: "LOW", Status: Open,
			CreatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
	}
	jsonwtest.Same(t, rows, (*Risk).AppendJSON, ToView)
}
