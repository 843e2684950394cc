package risk

import (
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
)

// viewJSON writes a risk's View from the row columns reads, straight from
// its wire values (storekit.RowJSON): the list page and the detail
// (api.ListRows, api.DetailRow; TestRiskJSONIsView).
var viewJSON = storekit.NewRowJSON(
	storekit.ID("id", "id", IDPrefix),
	storekit.ID("project_id", "projectId", project.IDPrefix),
	storekit.Text("title", "title"),
	storekit.Text("description", "description").OrNull(),
	storekit.Text("severity", "severity"),
	storekit.Text("status", "status"),
	storekit.UUID("owner_id", "ownerId").OrNull(),
	storekit.Time(
		"created_at",
		"createdAt",
	),
	storekit.Time("updated_at", "updatedAt"),
	storekit.Time("archived_at", "archivedAt").OrNull(),
)
