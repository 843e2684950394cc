package risk

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
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
			Query:   ListQuery{}, Result: List{}, Handler: h.list},
		{Method: http.MethodGet, Path: "detail", ID: "getRisk",
			Summary: "One risk",
			Query:   api.IDQuery{}, Result: View{}, Handler: h.get},
		{Method: http.MethodPost, Path: "create", ID: "createRisk", Idempotent: true,
			Summary: "Register a risk (status OPEN)",
			Body:    CreateRequest{}, Result: View{}, Handler: h.create},
		{Method: route.PostAndPatch, Path: "update", ID: "updateRisk", Fails: []pmapi.Code{pmapi.CodeInvalidTransition},
			Summary: "Change a risk; status moves follow the table (400 INVALID_TRANSITION otherwise)",
			Body:    UpdateRequest{}, Result: View{}, Handler: h.update},
		{Method: http.MethodPost, Path: "archive", ID: "archiveRisk",
			Summary: "Archive a risk",
			Body:    IDRequest{}, Result: View{}, Handler: h.setArchived(true)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreRisk",
			Summary: "Restore an archived risk",
			Body:    IDRequest{}, Result: View{}, Handler: h.setArchived(false)},
	}
}

// list answers a page of risks, written by the store from PostgreSQL's wire
// values (api.ListRows).
func (h handlers) list(c *fiber.Ctx) error {
	q, before, err := api.DecodeList[ListQuery](c, "risks")
	if err != nil {
		return err
	}
	f := Filter{ProjectID: q.ProjectID, Status: q.Status, Severity: q.Severity, OwnerID: q.OwnerID, Q: q.Q,
		CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore, IncludeArchived: q.IncludeArchived,
		Before: before, Limit: q.Limit + 1}
	return api.ListRows(c, "risks", q.Limit, f, h.risks.List)
}

// get answers the risk the query's id names (a malformed id is not found).
func (h handlers) get(c *fiber.Ctx) error {
	id, err := ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	return api.DetailRow(c, id, h.risks.Detail)
}

func (h handlers) create(c *fiber.Ctx) error {
	in, err := api.ParseBody(c, ParseCreate)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	r, err := h.risks.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(r))
}

func (h handlers) update(c *fiber.Ctx) error {
	req, err := api.DecodeBody[UpdateRequest](c)
	if err != nil {
		return err
	}
	id, changes, err := ParseUpdate(req, api.BodyFields(c))
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	r, err := h.risks.Update(c.UserContext(), shard, ws, id, changes)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(r))
}

// setArchived serves archive (true) and restore (false) of the risk the body
// names.
func (h handlers) setArchived(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[IDRequest](c)
		if err != nil {
			return err
		}
		id, err := ParseID(req.RiskID)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		r, err := h.risks.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return api.Created(c, ToView(r))
	}
}
