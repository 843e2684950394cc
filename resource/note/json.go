package note

import (
	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/project"
)

// AppendJSON appends json.Marshal(ToView(*n)) without building the view: the
// list page writes its notes with it (api.ListJSON; TestNoteJSONIsView).
func (n *Note) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = pmapi.AppendID(b, IDPrefix, n.ID)
	b = append(b, `,"projectId":`...)
	b = pmapi.AppendID(b, project.IDPrefix, n.ProjectID)
	b = append(b, `,"body":`...)
	b = jsonw.String(b, n.Body)
	b = append(b, `,"createdAt":`...)
	b = jsonw.TimePtr(b, &n.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = jsonw.TimePtr(b, &n.UpdatedAt)
	return append(b, '}')
}
