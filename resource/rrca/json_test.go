package rrca

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/jsonw/jsonwtest"
)

// TestAnalysisJSONIsView: the list page's analyses are the view's JSON, with
// every field set and with every nullable one null.
func TestAnalysisJSONIsView(t *testing.T) {
	p, r := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_789, time.FixedZone("CET", 3600))
	rows := []Analysis{
		{ID: uuid.Must(uuid.NewV7()), Title: "Seal <leak> & \"drip\"", ProblemStatement: "Line 2\nstops\u2028", ProjectID: &p, SourceRiskID: &r,
			Phase: Analyze, NodeCount: 7, CreatedAt: time.Now(), UpdatedAt: time.Now().UTC(), ArchivedAt: &archived},
		{ID: uuid.Must(uuid.NewV7()), Title: "t", Phase: Define, CreatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC),
			UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
	}
	jsonwtest.Same(t, rows, (*Analysis).AppendJSON, ToView)
}
