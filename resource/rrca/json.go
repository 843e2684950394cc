package rrca

import (
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
)

// AppendJSON appends json.Marshal(ToView(*a)) without building the view: the
// list page writes its analyses with it (api.ListJSON; TestAnalysisJSONIsView).
func (a *Analysis) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = pmapi.AppendID(b, IDPrefix, a.ID)
	b = append(b, `,"title":`...)
	b = jsonw.String(b, a.Title)
	b = append(b, `,"problemStatement":`...)
	b = jsonw.String(b, a.ProblemStatement)
	b = append(b, `,"projectId":`...)
	b = appendOptID(b, project.IDPrefix, a.ProjectID)
	b = append(b, `,"sourceRiskId":`...)
	b = appendOptID(b, risk.IDPrefix, a.SourceRiskID)
	b = append(b, `,"phase":`...)
	b = jsonw.String(b, a.Phase)
	b = append(b, `,"nodeCount":`...)
	b = jsonw.Int(b, a.NodeCount)
	b = append(b, `,"createdAt":`...)
	b = jsonw.TimePtr(b, &a.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = jsonw.TimePtr(b, &a.UpdatedAt)
	b = append(b, `,"archivedAt":`...)
	b = jsonw.TimePtr(b, a.ArchivedAt)
	return append(b, '}')
}

// appendOptID is ids.Format's id in JSON, or null.
func appendOptID(b []byte, prefix string, id *uuid.UUID) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return pmapi.AppendID(b, prefix, *id)
}
