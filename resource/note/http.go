package note

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/resource/project"
)

// routes are the notes' operations.
var routes = route.For("note", "notes", "Notes")

// Resource registers notes with the server.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"notes"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "notes", Event: "note.deleted",
			IDPrefix: IDPrefix, IDField: "noteId", Remove: RemoveInProject},
		TagDoc: "Notes: free-text notes on a project.",
	}, handlers{s}.operations)
}

// ListQuery documents and decodes the note list's parameters.
type ListQuery struct {
	api.ListQuery
	api.SyncQuery
	ProjectID *uuid.UUID `query:"projectId" id:"project" doc:"Omit for the notes of the whole workspace"`
	Q         string     `query:"q" doc:"Case-insensitive substring of the body"`
}

type handlers struct{ notes Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listNotes",
			Summary: "Notes, newest first",
			Query:   ListQuery{}, Result: List{},
			Handler: route.List("notes", api.DecodeSync[ListQuery], filter, h.notes.List)},
		{Method: http.MethodGet, Path: "detail", ID: "getNote",
			Summary: "One note",
			Query:   api.IDQuery{}, Result: View{}, Handler: route.Detail(ParseID, record.Detail)},
		{Method: http.MethodPost, Path: "create", ID: "createNote", Idempotent: true,
			Summary: "Add a note to a project (emits note.created)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Create(parseCreate, h.notes.Create, ToView)},
		{Method: route.PostAndPatch, Path: "update", ID: "updateNote", IfMatch: true,
			Summary: "Rewrite a note (emits note.updated)",
			Body:    UpdateRequest{}, Result: View{}, Handler: route.Update(parseUpdate, h.notes.Update, ToView)},
		{Method: http.MethodPost, Path: "delete", ID: "deleteNote",
			Summary: "Delete a note (emits note.deleted)",
			Body:    IDRequest{}, Result: Deleted{}, Handler: h.delete},
	}
}

// filter is the store's filter of a list's query, asking for one row past
// the page.
func filter(q ListQuery, k api.Keyset) (Filter, int) {
	return Filter{ProjectID: q.ProjectID, Q: q.Q, Page: k, Limit: q.Limit + 1}, q.Limit
}

// parseCreate reads the project a note goes into and its text, checking the
// text first.
func parseCreate(req CreateRequest) (NewNote, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return NewNote{}, err
	}
	pid, err := project.ParseID(req.ProjectID)
	return NewNote{ProjectID: pid, Body: body}, err
}

// parseUpdate reads the note and its new text, checking the text first. The
// text is the one field, and a required one, so which fields the body names
// does not matter.
func parseUpdate(req UpdateRequest, _ route.Has) (uuid.UUID, string, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return uuid.Nil, "", err
	}
	id, err := ParseID(req.NoteID)
	return id, body, err
}

// delete removes the note the body names, answering with the id as given.
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
