package note

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/facet"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// The scopes of notes.
const (
	ScopeRead  = "notes:read"
	ScopeWrite = "notes:write"
)

// Resource registers notes with the server.
func Resource(s Store) api.Resource {
	return api.Resource{
		Name: "note", Scopes: []string{ScopeRead, ScopeWrite}, Tables: []string{"notes"},
		Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade:    &facet.Cascade{Table: "notes", Event: "note.deleted", IDPrefix: IDPrefix, IDField: "noteId", Remove: RemoveInProject},
		Operations: func(api.Catalog) []api.Operation { return handlers{s}.operations() },
	}
}

// ListQuery documents and decodes the note list's parameters.
type ListQuery struct {
	api.ListQuery
	ProjectID *uuid.UUID `query:"projectId" id:"project" doc:"Omit for the notes of the whole workspace"`
	Q         string     `query:"q" doc:"Case-insensitive substring of the body"`
}

// DetailQuery names one note.
type DetailQuery struct {
	ID string `query:"id" required:"true"`
}

type handlers struct{ notes Store }

func (h handlers) operations() []api.Operation {
	const tag, base = "Notes", "/openapi/v1/resource/note/"
	read, write := ScopeRead, ScopeWrite
	update := func(method, id string) api.Operation {
		return api.Operation{Method: method, Path: base + "update", ID: id, Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Rewrite a note (emits note.updated)", Body: UpdateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: api.Write(parseUpdate, h.update, ToView)}
	}
	return []api.Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listNotes", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Notes, newest first", Query: ListQuery{}, Result: List{}, Status: http.StatusOK, Handler: h.list},
		{Method: http.MethodGet, Path: base + "detail", ID: "getNote", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "One note", Query: DetailQuery{}, Result: View{}, Status: http.StatusOK, Handler: api.Detail(ParseID, h.notes.Get, ToView)},
		{Method: http.MethodPost, Path: base + "create", ID: "createNote", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a note to a project (emits note.created)", Body: CreateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: api.Write(parseCreate, h.create, ToView)},
		update(http.MethodPost, "updateNote"),
		update(http.MethodPatch, "patchNote"),
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteNote", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Delete a note (emits note.deleted)", Body: IDRequest{}, Result: Deleted{}, Status: http.StatusCreated, Handler: h.delete},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	before, err := q.Before("notes")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	items, err := h.notes.List(c.UserContext(), shard, ws, Filter{ProjectID: q.ProjectID, Q: q.Q, Before: before, Limit: q.Limit + 1})
	if err != nil {
		return err
	}
	page := List{}
	page.Items, page.NextCursor = api.Page("notes", items, q.Limit, func(n Note) uuid.UUID { return n.ID }, ToView)
	return api.Respond(c, http.StatusOK, page)
}

// text is a create's or update's target and validated body.
type text struct {
	id   uuid.UUID
	body string
}

func parseCreate(req CreateRequest, _ func(string) bool) (text, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return text{}, err
	}
	pid, err := project.ParseID(req.ProjectID)
	return text{pid, body}, err
}

func parseUpdate(req UpdateRequest, _ func(string) bool) (text, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return text{}, err
	}
	id, err := ParseID(req.NoteID)
	return text{id, body}, err
}

func (h handlers) create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in text) (Note, error) {
	return h.notes.Create(ctx, shard, ws, in.id, in.body)
}

func (h handlers) update(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in text) (Note, error) {
	return h.notes.Update(ctx, shard, ws, in.id, in.body)
}

func (h handlers) delete(c *fiber.Ctx) error {
	req, err := api.DecodeBody[IDRequest](c)
	if err != nil {
		return err
	}
	id, err := ParseID(req.NoteID)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	if err := h.notes.Delete(c.UserContext(), shard, ws, id); err != nil {
		return err
	}
	return api.Created(c, Deleted{ID: req.NoteID, Deleted: true})
}
