package rrca

import (
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
)

// viewJSON writes an analysis's View from the row columns reads, straight
// from its wire values (storekit.RowJSON): the list page (api.ListRows;
// TestAnalysisJSONIsView).
var viewJSON = storekit.NewRowJSON(
	storekit.ID(
		"id",
		"id",
		IDPrefix,
	),
	storekit.Text("title", "title"),
	storekit.Text("problem_statement", "problemStatement"),
	storekit.ID("project_id", "projectId", project.IDPrefix).
		OrNull(),
	storekit.ID("source_risk_id", "sourceRiskId", risk.IDPrefix).OrNull(),
	storekit.Text("phase", "phase"),
	storekit.Int("node_count", "nodeCount"),
	storekit.Time(
		"created_at",
		"createdAt",
	),
	storekit.Time("updated_at", "updatedAt"),
	storekit.Time("archived_at", "archivedAt").OrNull(),
)
