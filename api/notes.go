package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
)

// NoteListQuery documents the note list's parameters.
type NoteListQuery struct {
	ListQuery
	ProjectID string `query:"projectId" doc:"Omit for the notes of the whole workspace"`
	Q         string `query:"q" doc:"Case-insensitive substring of the body"`
}

// NoteDetailQuery names one note.
type NoteDetailQuery struct {
	ID string `query:"id" required:"true"`
}

func (s *Server) noteOperations() []Operation {
	const tag, base = "Notes", "/openapi/v1/resource/note/"
	read, write := "notes:read", "notes:write"
	update := func(method, id string) Operation {
		return Operation{Method: method, Path: base + "update", ID: id, Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Rewrite a note (emits note.updated)", Body: note.UpdateRequest{}, Result: note.View{}, Status: http.StatusCreated, Handler: s.updateNote}
	}
	return []Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listNotes", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Notes, newest first", Query: NoteListQuery{}, Result: note.List{}, Status: http.StatusOK, Handler: s.listNotes},
		{Method: http.MethodGet, Path: base + "detail", ID: "getNote", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One note", Query: NoteDetailQuery{}, Result: note.View{}, Status: http.StatusOK, Handler: s.getNote},
		{Method: http.MethodPost, Path: base + "create", ID: "createNote", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Add a note to a project (emits note.created)", Body: note.CreateRequest{}, Result: note.View{}, Status: http.StatusCreated, Handler: s.createNote},
		update(http.MethodPost, "updateNote"),
		update(http.MethodPatch, "patchNote"),
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteNote", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Delete a note (emits note.deleted)", Body: note.IDRequest{}, Result: note.Deleted{}, Status: http.StatusCreated, Handler: s.deleteNote},
	}
}

func (s *Server) listNotes(c *fiber.Ctx) error {
	var f note.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.ProjectID, err = queryProject(c, "projectId"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "notes"); err != nil {
		return err
	}
	f.Q = c.Query("q")
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, err := s.notes.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := note.List{Items: []note.View{}, NextCursor: nextCursor("notes", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, n := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, note.ToView(n))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) getNote(c *fiber.Ctx) error {
	id, err := note.ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	n, err := s.notes.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, note.ToView(n))
}

func (s *Server) createNote(c *fiber.Ctx) error {
	req, err := decodeBody[note.CreateRequest](c)
	if err != nil {
		return err
	}
	body, err := note.ValidBody(req.Body)
	if err != nil {
		return err
	}
	pid, err := project.ParseID(req.ProjectID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	n, err := s.notes.Create(c.UserContext(), shard, ws, pid, body)
	if err != nil {
		return err
	}
	return created(c, note.ToView(n))
}

func (s *Server) updateNote(c *fiber.Ctx) error {
	req, err := decodeBody[note.UpdateRequest](c)
	if err != nil {
		return err
	}
	body, err := note.ValidBody(req.Body)
	if err != nil {
		return err
	}
	id, err := note.ParseID(req.NoteID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	n, err := s.notes.Update(c.UserContext(), shard, ws, id, body)
	if err != nil {
		return err
	}
	return created(c, note.ToView(n))
}

func (s *Server) deleteNote(c *fiber.Ctx) error {
	req, err := decodeBody[note.IDRequest](c)
	if err != nil {
		return err
	}
	id, err := note.ParseID(req.NoteID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	if err := s.notes.Delete(c.UserContext(), shard, ws, id); err != nil {
		return err
	}
	return created(c, note.Deleted{ID: req.NoteID, Deleted: true})
}
