package note

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Store reads and writes notes.
type Store struct {
	Events event.Emitter
}

const columns = "n.id, n.project_id, n.body, n.created_at, n.updated_at"

// fields are where the columns go in a Note.
func fields(n *Note) []any { return []any{&n.ID, &n.ProjectID, &n.Body, &n.CreatedAt, &n.UpdatedAt} }

const getSQL = "select " + columns + " from notes n where n.workspace_id = $1 and n.id = $2"

// record reads a note by id: the detail route's read.
var record = storekit.Record[Note]{Noun: "note", ByID: getSQL, Fields: fields, JSON: viewJSON}

// Filter selects notes.
type Filter struct {
	ProjectID *uuid.UUID
	Q         string
	Page      api.Keyset // updatedSince, the order and where the page starts
	Limit     int
}

// List returns a page of notes, newest first.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error {
	w := storekit.NewWhere("n", ws)
	w.Equal("project_id", f.ProjectID)
	w.Contains(f.Q, "body")
	w.Page(f.Page)
	sql := "select " + columns + " from notes n where " + w.SQL() + " order by " + w.Order() +
		" limit " + storekit.Limit(f.Limit)
	return storekit.ListJSON(ctx, shard, ws, f.Limit, viewJSON, rows, sql, w.Args()...)
}

// Create adds a note, emitting note.created.
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewNote) (Note, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (n Note, err error) {
		if err := project.Exists(ctx, tx, ws, in.ProjectID); err != nil {
			return n, err
		}
		if n, err = record.Scan(tx.QueryRow(ctx, `insert into notes as n (workspace_id, id, project_id, body)
			values ($1, $2, $3, $4) returning `+columns, ws, pmapi.NewID(), in.ProjectID, in.Body)); err != nil {
			return n, err
		}
		return n, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.created", Data: ToView(n)})
	})
}

// Update rewrites a note, emitting note.updated.
func (s Store) Update(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, body string) (Note, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (n Note, err error) {
		// An If-Match holds the row first; without one the update alone does.
		if err := api.IfMatchRead(ctx, id, func() (any, error) {
			cur, err := record.Lock(ctx, tx, ws, id)
			return ToView(cur), err
		}); err != nil {
			return n, err
		}
		if n, err = record.Scan(tx.QueryRow(ctx, `update notes n set body = $3, updated_at = now()
			where n.workspace_id = $1 and n.id = $2 returning `+columns, ws, id, body)); err != nil {
			return n, err
		}
		return n, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.updated", Data: ToView(n)})
	})
}

// Delete removes a note, emitting note.deleted.
func (s Store) Delete(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var projectID uuid.UUID
		err := tx.QueryRow(ctx, "delete from notes where workspace_id = $1 and id = $2 returning project_id", ws, id).
			Scan(&projectID)
		if err := storekit.Found(err, "note"); err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.deleted",
			Data: DeletedEvent{NoteID: pmapi.FormatID(IDPrefix, id), ProjectID: pmapi.FormatID(project.IDPrefix, projectID)}})
	})
}

// EventTypes documents the events notes emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "note.created", Description: "A note is created", Payload: View{}},
		{Name: "note.updated", Description: "A note is edited", Payload: View{}},
		{Name: "note.deleted", Description: "A note is deleted", Payload: DeletedEvent{}},
	}
}

// RemoveInProject deletes the notes of a project being deleted, inside its
// transaction, and returns their ids (the project store emits note.deleted).
var RemoveInProject = storekit.Removal("delete from notes where workspace_id = $1 and project_id = $2 returning id")
