package note

import (
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
)

// viewJSON writes a note's View from the row columns reads, straight from
// its wire values (storekit.RowJSON): the list page and the detail
// (api.ListRows, api.DetailRow; TestNoteJSONIsView).
var viewJSON = storekit.NewRowJSON(
	storekit.ID("id", "id", IDPrefix), storekit.ID("project_id", "projectId", project.IDPrefix),
	storekit.Text("body", "body"), storekit.Time("created_at", "createdAt"), storekit.Time("updated_at", "updatedAt"))
