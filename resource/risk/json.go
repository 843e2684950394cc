package risk

import (
	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/project"
)

// AppendJSON appends json.Marshal(ToView(*r)) without building the view: the
// list page writes its risks with it (api.ListJSON; TestRiskJSONIsView).
func (r *Risk) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = pmapi.AppendID(b, IDPrefix, r.ID)
	b = append(b, `,"projectId":`...)
	b = pmapi.AppendID(b, project.IDPrefix, r.ProjectID)
	b = append(b, `,"title":`...)
	b = jsonw.String(b, r.Title)
	b = append(b, `,"description":`...)
	b = jsonw.StringPtr(b, r.Description)
	b = append(b, `,"severity":`...)
	b = jsonw.String(b, r.Severity)
	b = append(b, `,"status":`...)
	b = jsonw.String(b, r.Status)
	b = append(b, `,"ownerId":`...)
	b = jsonw.UUID(b, r.OwnerID)
	b = append(b, `,"createdAt":`...)
	b = jsonw.TimePtr(b, &r.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = jsonw.TimePtr(b, &r.UpdatedAt)
	b = append(b, `,"archivedAt":`...)
	b = jsonw.TimePtr(b, r.ArchivedAt)
	return append(b, '}')
}
