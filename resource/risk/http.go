package risk

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/facet"
)

// The scopes of risks.
const (
	ScopeRead  = "risks:read"
	ScopeWrite = "risks:write"
)

// Resource registers risks with the server.
func Resource(s Store) api.Resource {
	return api.Resource{
		Name: "risk", Scopes: []string{ScopeRead, ScopeWrite}, Tables: []string{"risks"},
		Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade:    &facet.Cascade{Table: "risks", Event: "risk.deleted", IDPrefix: IDPrefix, IDField: "riskId", Remove: RemoveInProject},
		Operations: func(api.Catalog) []api.Operation { return handlers{s}.operations() },
	}
}

// ListQuery documents and decodes the risk list's parameters.
type ListQuery struct {
	api.ListQuery
	ProjectID       *uuid.UUID `query:"projectId" prefix:"prj_" noun:"project" doc:"Omit for the risks of the whole workspace"`
	Status          string     `query:"status" enum:"OPEN,MITIGATING,RESOLVED"`
	Severity        string     `query:"severity" enum:"LOW,MEDIUM,HIGH,CRITICAL"`
	OwnerID         *uuid.UUID `query:"ownerId" format:"uuid"`
	Q               string     `query:"q" doc:"Case-insensitive substring of the title or description"`
	CreatedAfter    *time.Time `query:"createdAfter" format:"date-time" doc:"Created at or after"`
	CreatedBefore   *time.Time `query:"createdBefore" format:"date-time" doc:"Created before"`
	IncludeArchived bool       `query:"includeArchived"`
}

// DetailQuery names one risk.
type DetailQuery struct {
	ID string `query:"id" required:"true"`
}

type handlers struct{ risks Store }

func (h handlers) operations() []api.Operation {
	const tag, base = "Risks", "/openapi/v1/resource/risk/"
	read, write := ScopeRead, ScopeWrite
	update := func(method, id string) api.Operation {
		return api.Operation{Method: method, Path: base + "update", ID: id, Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Change a risk; status moves follow the table (400 INVALID_TRANSITION otherwise)", Body: UpdateRequest{},
			Result: View{}, Status: http.StatusCreated, Handler: h.update}
	}
	return []api.Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listRisks", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Risks, newest first; without projectId, the whole workspace's", Query: ListQuery{}, Result: List{}, Status: http.StatusOK, Handler: h.list},
		{Method: http.MethodGet, Path: base + "detail", ID: "getRisk", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "One risk", Query: DetailQuery{}, Result: View{}, Status: http.StatusOK, Handler: h.get},
		{Method: http.MethodPost, Path: base + "create", ID: "createRisk", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Register a risk (status OPEN)", Body: CreateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.create},
		update(http.MethodPost, "updateRisk"),
		update(http.MethodPatch, "patchRisk"),
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveRisk", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Archive a risk", Body: IDRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.archive(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreRisk", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Restore an archived risk", Body: IDRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.archive(false)},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	before, err := q.Before("risks")
	if err != nil {
		return err
	}
	f := Filter{ProjectID: q.ProjectID, Status: q.Status, Severity: q.Severity, OwnerID: q.OwnerID, Q: q.Q,
		CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore, IncludeArchived: q.IncludeArchived, Before: before, Limit: q.Limit + 1}
	shard, ws := api.Tenant(c)
	items, err := h.risks.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := List{}
	page.Items, page.NextCursor = api.Page("risks", items, q.Limit, func(r Risk) uuid.UUID { return r.ID }, ToView)
	return api.Respond(c, http.StatusOK, page)
}

func (h handlers) get(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[DetailQuery](c)
	if err != nil {
		return err
	}
	id, err := ParseID(q.ID)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	r, err := h.risks.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return api.Respond(c, http.StatusOK, ToView(r))
}

func (h handlers) create(c *fiber.Ctx) error {
	req, err := api.DecodeBody[CreateRequest](c)
	if err != nil {
		return err
	}
	in, err := ParseCreate(req)
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
	id, ch, err := ParseUpdate(req, api.BodyFields(c))
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	r, err := h.risks.Update(c.UserContext(), shard, ws, id, ch)
	if err != nil {
		return err
	}
	return api.Created(c, ToView(r))
}

func (h handlers) archive(archived bool) fiber.Handler {
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
