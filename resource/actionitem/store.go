package actionitem

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Store reads and writes action items and their logs.
type Store struct {
	Events event.Emitter
	// Detach, when set, runs inside a delete before the items go: it clears
	// other resources' references to them (corrective actions outlive their
	// item, and a foreign key cannot set NULL on Citus). The referring
	// resource owns it, so only it writes its table.
	Detach func(ctx context.Context, tx pgx.Tx, ws uuid.UUID, items []uuid.UUID) error
}

const columns = `a.id, a.title, a.description, a.status, a.owner_hint, a.project_id, a.due_date, a.source,
	a.source_rrca_id, a.source_node_id, a.source_suggestion_id, a.created_at, a.updated_at, a.archived_at`

// fields are where the columns go in an Item.
func fields(i *Item) []any {
	return []any{&i.ID, &i.Title, &i.Description, &i.Status, &i.OwnerHint, &i.ProjectID, &i.DueDate, &i.Source,
		&i.SourceRRCAID, &i.SourceNodeID, &i.SourceSuggestionID, &i.CreatedAt, &i.UpdatedAt, &i.ArchivedAt}
}

const getSQL = "select " + columns + " from action_items a where a.workspace_id = $1 and a.id = $2"

// record reads an action item by id.
var record = storekit.Record[Item]{Noun: "action item", ByID: getSQL, Fields: fields}

// Get returns one action item.
func (s Store) Get(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Item, error) {
	return record.Get(ctx, shard, ws, id)
}

// Filter selects action items for a list.
type Filter struct {
	Status          string
	ProjectID       *uuid.UUID
	OwnerHint       string
	Q               string
	DueAfter        *time.Time
	DueBefore       *time.Time
	CreatedAfter    *time.Time
	CreatedBefore   *time.Time
	IncludeArchived bool
	UpdatedSince    *time.Time
	// Sort is a key of SortFields; Desc flips the order.
	Sort string
	Desc bool
	// After is the keyset position: the previous page's last sort key and id.
	After *Position
	Limit int
}

// Position is a place in a sorted list.
type Position struct {
	Key string    `json:"k"`
	ID  uuid.UUID `json:"i"`
}

// sortKey is the SQL of a sort: its expression and the type its cursor text is
// cast back to. A missing due date sorts after every date.
func sortKey(field string) (expr, typ string) {
	switch field {
	case "updatedAt":
		return "a.updated_at", "timestamptz"
	case "dueDate":
		return "coalesce(a.due_date, 'infinity'::timestamptz)", "timestamptz"
	case "title":
		return `a.title collate "C"`, "text"
	}
	return "a.created_at", "timestamptz"
}

// List returns a page of items with each one's position for the next cursor.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter) ([]Item, []Position, error) {
	w := storekit.NewWhere("a", ws)
	w.Equal("status", f.Status)
	w.Equal("project_id", f.ProjectID)
	w.Contains(f.OwnerHint, "owner_hint")
	w.Contains(f.Q, "title", "description")
	w.Within("due_date", f.DueAfter, f.DueBefore)
	w.Within("created_at", f.CreatedAfter, f.CreatedBefore)
	w.Live(f.IncludeArchived)
	w.Within("updated_at", f.UpdatedSince, nil)
	if f.Sort == "updatedAt" && !f.Desc {
		// A mirror's walk (api.SyncQuery): only changes no transaction
		// under way can precede.
		w.Add("a.updated_at < ?", &storekit.Horizon{})
	}
	expr, typ := sortKey(f.Sort)
	dir, cmp := "asc", ">"
	if f.Desc {
		dir, cmp = "desc", "<"
	}
	if f.After != nil {
		w.Add(fmt.Sprintf("(%s, a.id) %s (?::%s, ?::uuid)", expr, cmp, typ), f.After.Key, f.After.ID)
	}
	sql := fmt.Sprintf("select %s, (%s)::text from action_items a where %s order by %s %s, a.id %s limit %s",
		columns, expr, w.SQL(), expr, dir, dir, w.Arg(f.Limit))
	rows, err := storekit.List(ctx, shard, ws, func(row pgx.Row) (positioned, error) {
		var key string
		i, err := record.Scan(keyedRow{row, &key})
		return positioned{i, Position{Key: key, ID: i.ID}}, err
	}, sql, w.Args()...)
	items, pos := make([]Item, len(rows)), make([]Position, len(rows))
	for n, r := range rows {
		items[n], pos[n] = r.item, r.pos
	}
	return items, pos, err
}

type positioned struct {
	item Item
	pos  Position
}

// keyedRow reads the sort key a list selects after the item's columns.
type keyedRow struct {
	pgx.Row
	key *string
}

func (r keyedRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.key)...) }

// NewItem is a validated create.
type NewItem struct {
	Title              string
	Description        *string
	OwnerHint          *string
	ProjectID          *uuid.UUID
	DueDate            *time.Time
	Source             string
	SourceRRCAID       *uuid.UUID
	SourceNodeID       *uuid.UUID
	SourceSuggestionID *uuid.UUID
}

// CreateTx writes an item inside tx, emitting action-item.created.
func (s Store) CreateTx(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, in NewItem) (Item, error) {
	if in.ProjectID != nil {
		if err := project.Exists(ctx, tx, ws, *in.ProjectID); err != nil {
			return Item{}, err
		}
	}
	if in.Source == "" {
		in.Source = SourceManual
	}
	it, err := record.Scan(
		tx.QueryRow(
			ctx,
			`insert into action_items as a (workspace_id, id, title, description, owner_hint, project_id, due_date,
			source, source_rrca_id, source_node_id, source_suggestion_id)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning `+columns,
			ws,
			pmapi.NewID(),
			in.Title,
			in.Description,
			in.OwnerHint,
			in.ProjectID,
			in.DueDate,
			in.Source,
			in.SourceRRCAID,
			in.SourceNodeID,
			in.SourceSuggestionID,
		),
	)
	if err != nil {
		return Item{}, err
	}
	return it, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "action-item.created", Data: ToView(it)})
}

// Create writes an item in its own transaction.
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewItem) (it Item, err error) {
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		it, err = s.CreateTx(ctx, tx, shard, ws, in)
		return err
	})
	return it, err
}

// Fields is a validated update; nil pointers are "not given".
type Fields struct {
	Title       *string
	Description **string
	Status      *string
	OwnerHint   **string
	DueDate     **time.Time
}

// UpdateTx applies f inside tx. A status move is checked against the table,
// logged as a STATUS_CHANGE entry by author, and emitted as
// action-item.status_changed; any change emits action-item.updated.
func (s Store) UpdateTx(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	f Fields,
	author string,
) (Item, error) {
	cur, err := record.Lock(ctx, tx, ws, id)
	if err != nil {
		return Item{}, err
	}
	if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
		return Item{}, err
	}
	next := cur
	var events []event.Event
	if f.Status != nil {
		if err := CheckTransition(cur.Status, *f.Status); err != nil {
			return Item{}, err
		}
		next.Status = *f.Status
		if err := addLog(ctx, tx, ws, id, LogStatusChange, cur.Status+" -> "+next.Status, author, nil); err != nil {
			return Item{}, err
		}
		events = append(events, event.Event{Type: "action-item.status_changed",
			Data: StatusEvent{ActionItemID: pmapi.FormatID(IDPrefix, id), From: cur.Status, To: next.Status}})
	}
	validate.Set(&next.Title, f.Title)
	validate.Set(&next.Description, f.Description)
	validate.Set(&next.OwnerHint, f.OwnerHint)
	validate.Set(&next.DueDate, f.DueDate)
	it, err := record.Scan(
		tx.QueryRow(ctx, `update action_items a set title = $3, description = $4, status = $5, owner_hint = $6, due_date = $7,
		updated_at = now() where a.workspace_id = $1 and a.id = $2 returning `+columns,
			ws, id, next.Title, next.Description, next.Status, next.OwnerHint, next.DueDate),
	)
	if err != nil {
		return Item{}, err
	}
	events = append(events, event.Event{Type: "action-item.updated", Data: ToView(it)})
	return it, s.Events.Emit(ctx, tx, shard, ws, events...)
}

// AttachTx puts the item in a project of the workspace.
func (s Store) AttachTx(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws, id, projectID uuid.UUID,
) (Item, error) {
	cur, err := record.Lock(ctx, tx, ws, id)
	if err != nil {
		return Item{}, err
	}
	if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
		return Item{}, err
	}
	if err := project.Exists(ctx, tx, ws, projectID); err != nil {
		return Item{}, err
	}
	it, err := record.Scan(tx.QueryRow(ctx, `update action_items a set project_id = $3, updated_at = now()
		where a.workspace_id = $1 and a.id = $2 returning `+columns, ws, id, projectID))
	if err != nil {
		return Item{}, err
	}
	return it, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "action-item.project_attached", Data: ToView(it)})
}

// SetArchivedTx archives or restores; repeating it changes and emits nothing.
func (s Store) SetArchivedTx(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	archived bool,
) (Item, error) {
	return archival.Set(ctx, tx, shard, s.Events, ws, id, archived)
}

var archival = storekit.Archival[Item]{Noun: "action-item", Lock: record.Lock, Apply: storekit.Returning(record.Scan),
	Archive: `update action_items a set archived_at = now(), updated_at = now()
		where a.workspace_id = $1 and a.id = $2 returning ` + columns,
	Restore: `update action_items a set archived_at = null, updated_at = now()
		where a.workspace_id = $1 and a.id = $2 returning ` + columns,
	ArchivedAt: func(i Item) *time.Time { return i.ArchivedAt }, View: func(i Item) any { return ToView(i) }}

// DeleteTx removes the item and its logs for good, emitting action-item.deleted.
func (s Store) DeleteTx(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, id uuid.UUID) error {
	cur, err := record.Lock(ctx, tx, ws, id)
	if err != nil {
		return err
	}
	if err := s.detach(ctx, tx, ws, []uuid.UUID{id}); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "delete from action_items where workspace_id = $1 and id = $2", ws, id); err != nil {
		return err
	}
	return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "action-item.deleted",
		Data: DeletedEvent{
			ActionItemID: pmapi.FormatID(IDPrefix, id),
			ProjectID:    pmapi.FormatOptionalID(project.IDPrefix, cur.ProjectID),
		}})
}

func (s Store) detach(ctx context.Context, tx pgx.Tx, ws uuid.UUID, ids []uuid.UUID) error {
	if s.Detach == nil || len(ids) == 0 {
		return nil
	}
	return s.Detach(ctx, tx, ws, ids)
}

// RemoveInProject deletes the items of a project being deleted with their
// logs, inside its transaction, and returns their ids (the project store emits
// action-item.deleted).
func (s Store) RemoveInProject(ctx context.Context, tx pgx.Tx, ws, project uuid.UUID) ([]uuid.UUID, error) {
	ids, err := storekit.IDs(
		tx.Query(ctx, "select id from action_items where workspace_id = $1 and project_id = $2", ws, project),
	)
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	if err := s.detach(ctx, tx, ws, ids); err != nil {
		return nil, err
	}
	_, err = tx.Exec(ctx, "delete from action_items where workspace_id = $1 and project_id = $2", ws, project)
	return ids, err
}

func addLog(ctx context.Context, tx pgx.Tx, ws, item uuid.UUID, kind, message, author string, out *Log) error {
	l := Log{ID: pmapi.NewID(), ActionItemID: item, Kind: kind, Message: message, Author: author}
	err := tx.QueryRow(ctx, `insert into execution_logs (workspace_id, id, action_item_id, kind, message, author)
		values ($1, $2, $3, $4, $5, $6) returning created_at`, ws, l.ID, item, kind, message, author).Scan(&l.CreatedAt)
	if out != nil {
		*out = l
	}
	return err
}

// AddLog appends an entry to the item's execution log, emitting action-item.logged.
func (s Store) AddLog(
	ctx context.Context,
	shard *tenant.Shard,
	ws, item uuid.UUID,
	kind, message, author string,
) (Log, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (l Log, err error) {
		if _, err := record.Lock(ctx, tx, ws, item); err != nil {
			return l, err
		}
		if err := addLog(ctx, tx, ws, item, kind, message, author, &l); err != nil {
			return l, err
		}
		return l, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "action-item.logged",
			Data: LoggedEvent{ActionItemID: pmapi.FormatID(IDPrefix, item), Log: ToLogView(l)}})
	})
}

// ListLogs returns the item's log, oldest first, optionally of one kind.
func (s Store) ListLogs(
	ctx context.Context,
	shard *tenant.Shard,
	ws, item uuid.UUID,
	kind string,
	after *uuid.UUID,
	limit int,
) ([]Log, error) {
	var logs []Log
	err := storekit.ReadUnder(
		ctx,
		shard,
		ws,
		"action item",
		"select exists(select 1 from action_items where workspace_id = $1 and id = $2)",
		item,
		func(b *pgx.Batch) {
			storekit.QueueRows(b, &logs, func(row pgx.Row) (l Log, err error) {
				err = row.Scan(&l.ID, &l.ActionItemID, &l.Kind, &l.Message, &l.Author, &l.CreatedAt)
				return l, err
			}, `select id, action_item_id, kind, message, author, created_at from execution_logs
				where workspace_id = $1 and action_item_id = $2 and ($3 = '' or kind = $3) and ($4::uuid is null or id > $4)
				order by id limit $5`, ws, item, kind, after, limit)
		},
	)
	return logs, err
}

// EventTypes documents the events action items emit.
func EventTypes() []event.Type {
	return []event.Type{
		{
			Name:        "action-item.created",
			Description: "An action item is created (by hand, by a corrective action or a look-across apply)",
			Payload:     View{},
		},
		{Name: "action-item.updated", Description: "An action item is edited (status moves included)", Payload: View{}},
		{Name: "action-item.status_changed", Description: "An action item's status moves", Payload: StatusEvent{}},
		{Name: "action-item.project_attached", Description: "An action item is attached to a project", Payload: View{}},
		{Name: "action-item.archived", Description: "An action item is archived", Payload: View{}},
		{Name: "action-item.restored", Description: "An archived action item is restored", Payload: View{}},
		{Name: "action-item.deleted", Description: "An action item is deleted", Payload: DeletedEvent{}},
		{Name: "action-item.logged", Description: "An execution log entry is added", Payload: LoggedEvent{}},
	}
}
