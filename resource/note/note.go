// Package note is the project-note resource: free text attached to a project,
// with its JSON views and its SQL.
package note

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/search"
	"github.com/pmapi/pmapi/tenant"
)

// IDPrefix starts note ids in the API.
const IDPrefix = "not_"

// Note is a stored note.
type Note struct {
	ID        uuid.UUID
	ProjectID uuid.UUID
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// View is a note in the API and in event payloads.
type View struct {
	ID        string    `json:"id" example:"not_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ProjectID string    `json:"projectId"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ToView converts a stored note.
func ToView(n Note) View {
	return View{ID: pmapi.FormatID(IDPrefix, n.ID), ProjectID: pmapi.FormatID("prj_", n.ProjectID), Body: n.Body, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
}

// List is a page of notes.
type List struct {
	Items      []View  `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// CreateRequest adds a note to a project.
type CreateRequest struct {
	ProjectID string `json:"projectId"`
	Body      string `json:"body"`
}

// UpdateRequest rewrites a note.
type UpdateRequest struct {
	NoteID string `json:"noteId"`
	Body   string `json:"body"`
}

// IDRequest names one note.
type IDRequest struct {
	NoteID string `json:"noteId"`
}

// Deleted answers a delete.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted" enum:"true"`
}

// DeletedEvent is the data of note.deleted.
type DeletedEvent struct {
	NoteID    string `json:"noteId"`
	ProjectID string `json:"projectId"`
}

// ValidBody checks a note's text (1 to 20000 characters).
func ValidBody(s string) (string, error) {
	if strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > 20000 {
		return "", pmapi.Invalid("body", "body must be 1 to 20000 characters")
	}
	return s, nil
}

// ParseID reads a note id; a malformed one names nothing (404).
func ParseID(s string) (uuid.UUID, error) { return pmapi.ParseID(IDPrefix, s, "note") }

// SearchSource makes notes findable by their text.
var SearchSource = search.Source{
	Type: "note", Scope: "notes:read", Table: "notes", IDPrefix: IDPrefix,
	Title: "left(r.body, 120)", Body: "r.body", ProjectID: "r.project_id", Live: "true",
}

// Store reads and writes notes.
type Store struct {
	Events event.Emitter
}

const columns = "n.id, n.project_id, n.body, n.created_at, n.updated_at"

func scan(row pgx.Row) (Note, error) {
	var n Note
	err := row.Scan(&n.ID, &n.ProjectID, &n.Body, &n.CreatedAt, &n.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return n, pmapi.NotFound("note")
	}
	return n, err
}

// Get returns one note.
func (s Store) Get(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Note, error) {
	var n Note
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+columns+" from notes n where n.workspace_id = $1 and n.id = $2", ws, id).QueryRow(func(row pgx.Row) error {
			var err error
			n, err = scan(row)
			return err
		})
	})
	return n, err
}

// Filter selects notes.
type Filter struct {
	ProjectID *uuid.UUID
	Q         string
	Before    *uuid.UUID
	Limit     int
}

// List returns a page of notes, newest first.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter) ([]Note, error) {
	where := []string{"n.workspace_id = $1"}
	args := []any{ws}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if f.ProjectID != nil {
		add("n.project_id = ?", *f.ProjectID)
	}
	if f.Q != "" {
		add(`n.body ilike '%' || ? || '%'`, strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(f.Q))
	}
	if f.Before != nil {
		add("n.id < ?", *f.Before)
	}
	args = append(args, f.Limit)
	sql := fmt.Sprintf("select %s from notes n where %s order by n.id desc limit $%d", columns, strings.Join(where, " and "), len(args))
	var out []Note
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				n, err := scan(rows)
				if err != nil {
					return err
				}
				out = append(out, n)
			}
			return rows.Err()
		})
	})
	return out, err
}

// Create adds a note, emitting note.created.
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws, project uuid.UUID, body string) (Note, error) {
	var n Note
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, "select exists(select 1 from projects where workspace_id = $1 and id = $2)", ws, project).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return pmapi.NotFound("project")
		}
		var err error
		if n, err = scan(tx.QueryRow(ctx, `insert into notes as n (workspace_id, id, project_id, body) values ($1, $2, $3, $4) returning `+columns,
			ws, pmapi.NewID(), project, body)); err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.created", Data: ToView(n)})
	})
	return n, err
}

// Update rewrites a note, emitting note.updated.
func (s Store) Update(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, body string) (Note, error) {
	var n Note
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		if n, err = scan(tx.QueryRow(ctx, `update notes n set body = $3, updated_at = now() where n.workspace_id = $1 and n.id = $2 returning `+columns,
			ws, id, body)); err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.updated", Data: ToView(n)})
	})
	return n, err
}

// Delete removes a note, emitting note.deleted.
func (s Store) Delete(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var project uuid.UUID
		err := tx.QueryRow(ctx, "delete from notes where workspace_id = $1 and id = $2 returning project_id", ws, id).Scan(&project)
		if errors.Is(err, pgx.ErrNoRows) {
			return pmapi.NotFound("note")
		}
		if err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "note.deleted",
			Data: DeletedEvent{NoteID: pmapi.FormatID(IDPrefix, id), ProjectID: pmapi.FormatID("prj_", project)}})
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
