package note

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// routes are the notes' operations.
var routes = route.For("note", "notes", "Notes")

// Resource registers notes with the server.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"notes"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "notes", Event: "note.deleted", IDPrefix: IDPrefix, IDField: "noteId", Remove: RemoveInProject},
		TagDoc:  "Notes: free-text notes on a project.",
	}, handlers{s}.operations)
}

// ListQuery documents and decodes the note list's parameters.
type ListQuery struct {
	api.ListQuery
	ProjectID *uuid.UUID `query:"projectId" id:"project" doc:"Omit for the notes of the whole workspace"`
	Q         string     `query:"q" doc:"Case-insensitive substring of the body"`
}

type handlers struct{ notes Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listNotes",
			Summary: "Notes, newest first", Query: ListQuery{}, Result: List{}, Handler: api.ListRows("notes", listFilter, h.notes.List)},
		{Method: http.MethodGet, Path: "detail", ID: "getNote",
			Summary: "One note", Query: api.IDQuery{}, Result: View{}, Handler: api.DetailRow(ParseID, h.notes.Detail)},
		{Method: http.MethodPost, Path: "create", ID: "createNote", Idempotent: true,
			Summary: "Add a note to a project (emits note.created)", Body: CreateRequest{}, Result: View{}, Handler: api.WriteOn(parseCreate, h.notes.Create, ToView)},
		{Method: route.PostAndPatch, Path: "update", ID: "updateNote",
			Summary: "Rewrite a note (emits note.updated)", Body: UpdateRequest{}, Result: View{}, Handler: api.WriteOn(parseUpdate, h.notes.Update, ToView)},
		{Method: http.MethodPost, Path: "delete", ID: "deleteNote",
			Summary: "Delete a note (emits note.deleted)", Body: IDRequest{}, Result: Deleted{}, Handler: api.Write(parseIDRequest, h.delete, api.AsIs)},
	}
}

func listFilter(q ListQuery, before *uuid.UUID, limit int) Filter {
	return Filter{ProjectID: q.ProjectID, Q: q.Q, Before: before, Limit: limit}
}

// parseCreate reads the project a note goes into and its body.
func parseCreate(req CreateRequest, _ func(string) bool) (uuid.UUID, string, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return uuid.Nil, "", err
	}
	pid, err := project.ParseID(req.ProjectID)
	return pid, body, err
}

// parseUpdate reads the note and its new body.
func parseUpdate(req UpdateRequest, _ func(string) bool) (uuid.UUID, string, error) {
	body, err := ValidBody(req.Body)
	if err != nil {
		return uuid.Nil, "", err
	}
	id, err := ParseID(req.NoteID)
	return id, body, err
}

func parseIDRequest(req IDRequest, _ func(string) bool) (api.Named, error) {
	return api.Name(ParseID, req.NoteID)
}

func (h handlers) delete(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, n api.Named) (Deleted, error) {
	return Deleted{ID: n.Given, Deleted: true}, h.notes.Delete(ctx, shard, ws, n.ID)
}
