package rrca

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/storekit/rowjsontest"
)

// TestAnalysisJSONIsView: the list page's analyses, written from their wire
// values, are the view's JSON, with every field set and with every nullable
// one null.
func TestAnalysisJSONIsView(t *testing.T) {
	p, r := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	archived := time.Date(2026, 3, 4, 5, 6, 7, 123_456_000, time.Local)
	now := time.Now().Truncate(time.Microsecond)
	rows := []Analysis{
		{
			ID:               uuid.Must(uuid.NewV7()),
			Title:            "Seal <leak> & \"drip\"",
			ProblemStatement: "Line 2\nstops\u2028",
			ProjectID:        &p,
			SourceRiskID:     &r,
			Phase:            Analyze,
			NodeCount:        7,
			CreatedAt:        now,
			UpdatedAt:        now,
			ArchivedAt:       &archived,
		},
		{ID: uuid.Must(uuid.NewV7()), Title: "t", Phase: Define, CreatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local),
			UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local)},
	}
	rowjsontest.Same(t, viewJSON, rows, func(a Analysis) []any {
		return []any{
			a.ID,
			a.Title,
			a.ProblemStatement,
			a.ProjectID,
			a.SourceRiskID,
			a.Phase,
			a.NodeCount,
			a.CreatedAt,
			a.UpdatedAt,
			a.ArchivedAt,
		}
	}, ToView)
}
