package risk

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
)

// routes are the risks' operations.
var routes = route.For("risk", "risks", "Risks")

// Resource registers risks with the server.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"risks"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "risks", Event: "risk.deleted",
			IDPrefix: IDPrefix, IDField: "riskId", Remove: RemoveInProject},
		TagDoc: "Risks: a project's issue register entries (OPEN, MITIGATING, RESOLVED) with severity and owner.",
	}, handlers{s}.operations)
}

// ListQuery documents and decodes the risk list's parameters.
type ListQuery struct {
	api.ListQuery
	api.SyncQuery
	ProjectID       *uuid.UUID `query:"projectId" id:"project" doc:"Omit for the risks of the whole workspace"`
	Status          string     `query:"status" enum:"OPEN,MITIGATING,RESOLVED"`
	Severity        string     `query:"severity" enum:"LOW,MEDIUM,HIGH,CRITICAL"`
	OwnerID         *uuid.UUID `query:"ownerId" format:"uuid"`
	Q               string     `query:"q" doc:"Case-insensitive substring of the title or description"`
	CreatedAfter    *time.Time `query:"createdAfter" format:"date-time" doc:"Created at or after"`
	CreatedBefore   *time.Time `query:"createdBefore" format:"date-time" doc:"Created before"`
	IncludeArchived bool       `query:"includeArchived"`
}

type handlers struct{ risks Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listRisks",
			Summary: "Risks, newest first; without projectId, the whole workspace's",
			Query:   ListQuery{}, Result: List{},
			Handler: route.List("risks", api.DecodeSync[ListQuery], filter, h.risks.List)},
		{Method: http.MethodGet, Path: "detail", ID: "getRisk",
			Summary: "One risk",
			Query:   api.IDQuery{}, Result: View{}, Handler: route.Detail(ParseID, record.Detail)},
		{Method: http.MethodPost, Path: "create", ID: "createRisk", Idempotent: true,
			Summary: "Register a risk (status OPEN)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Create(ParseCreate, h.risks.Create, ToView)},
		{Method: route.PostAndPatch, Path: "update", ID: "updateRisk", IfMatch: true,
			Fails:   []pmapi.Code{pmapi.CodeInvalidTransition},
			Summary: "Change a risk; status moves follow the table (400 INVALID_TRANSITION otherwise)",
			Body:    UpdateRequest{}, Result: View{}, Handler: route.Update(ParseUpdate, h.risks.Update, ToView)},
		{Method: http.MethodPost, Path: "archive", ID: "archiveRisk", IfMatch: true,
			Summary: "Archive a risk",
			Body:    IDRequest{}, Result: View{}, Handler: route.Archive(riskID, h.risks.SetArchived, ToView, true)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreRisk", IfMatch: true,
			Summary: "Restore an archived risk",
			Body:    IDRequest{}, Result: View{}, Handler: route.Archive(riskID, h.risks.SetArchived, ToView, false)},
	}
}

// filter is the store's filter of a list's query, asking for one row past
// the page.
func filter(q ListQuery, k api.Keyset) (Filter, int) {
	return Filter{ProjectID: q.ProjectID, Status: q.Status, Severity: q.Severity, OwnerID: q.OwnerID, Q: q.Q,
		CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore, IncludeArchived: q.IncludeArchived,
		Page: k, Limit: q.Limit + 1}, q.Limit
}

// riskID reads the risk an archive or restore body names.
var riskID = route.InBody(func(r IDRequest) string { return r.RiskID }, ParseID)
