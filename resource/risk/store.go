package risk

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Store reads and writes risks.
type Store struct {
	Events event.Emitter
}

const columns = "r.id, r.project_id, r.title, r.description, r.severity, r.status, r.owner_id, " +
	"r.created_at, r.updated_at, r.archived_at"

// fields are where the columns go in a Risk.
func fields(r *Risk) []any {
	return []any{
		&r.ID,
		&r.ProjectID,
		&r.Title,
		storekit.NullString(&r.Description),
		storekit.OneOf(&r.Severity, Severities),
		storekit.OneOf(
			&r.Status,
			Statuses,
		),
		storekit.NullUUID(&r.OwnerID),
		&r.CreatedAt,
		&r.UpdatedAt,
		storekit.NullTime(&r.ArchivedAt),
	}
}

const getSQL = "select " + columns + " from risks r where r.workspace_id = $1 and r.id = $2"

// record reads a risk by id: the detail route's read, and the lock of a change.
var record = storekit.Record[Risk]{Noun: "risk", ByID: getSQL, Fields: fields, JSON: viewJSON}

// Filter selects risks for a list; a nil ProjectID means the whole workspace.
type Filter struct {
	ProjectID       *uuid.UUID
	Status          string
	Severity        string
	OwnerID         *uuid.UUID
	Q               string
	CreatedAfter    *time.Time
	CreatedBefore   *time.Time
	IncludeArchived bool
	Page            api.Keyset // updatedSince, the order and where the page starts
	Limit           int
}

// List returns a page of risks, newest first.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error {
	w := storekit.NewWhere("r", ws)
	w.Equal("project_id", f.ProjectID)
	w.Equal("status", f.Status)
	w.Equal("severity", f.Severity)
	w.Equal("owner_id", f.OwnerID)
	w.Contains(f.Q, "title", "description")
	w.Within("created_at", f.CreatedAfter, f.CreatedBefore)
	w.Live(f.IncludeArchived)
	w.Page(f.Page)
	sql := "select " + columns + " from risks r where " + w.SQL() + " order by " + w.Order() +
		" limit " + storekit.Limit(f.Limit)
	return storekit.ListJSON(ctx, shard, ws, f.Limit, viewJSON, rows, sql, w.Args()...)
}

// NewRisk is a validated create.
type NewRisk struct {
	ProjectID   uuid.UUID
	Title       string
	Description *string
	Severity    string
	OwnerID     *uuid.UUID
}

// Create registers a risk (status OPEN), emitting risk.created.
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewRisk) (Risk, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (r Risk, err error) {
		if err := project.Exists(ctx, tx, ws, in.ProjectID); err != nil {
			return r, err
		}
		if err := storekit.CheckUsers(ctx, tx, ws, storekit.User("ownerId", in.OwnerID)); err != nil {
			return r, err
		}
		r, err = record.Scan(tx.QueryRow(ctx, `insert into risks as r
			(workspace_id, id, project_id, title, description, severity, owner_id)
			values ($1, $2, $3, $4, $5, $6, $7) returning `+columns,
			ws, pmapi.NewID(), in.ProjectID, in.Title, in.Description, in.Severity, in.OwnerID))
		if err != nil {
			return r, err
		}
		return r, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "risk.created", Data: ToView(r)})
	})
}

// Changes is a validated update; nil pointers are "not given".
type Changes struct {
	Status      *string
	Title       *string
	Description **string
	Severity    *string
	OwnerID     **uuid.UUID
}

// Update applies ch. A status move follows the table and emits
// risk.status_changed, plus risk.opened when the risk becomes OPEN again and
// risk.resolved when it becomes RESOLVED; any change emits risk.updated.
func (s Store) Update(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, ch Changes) (Risk, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (r Risk, err error) {
		cur, err := record.Lock(ctx, tx, ws, id)
		if err != nil {
			return r, err
		}
		if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
			return r, err
		}
		next := cur
		var events []event.Event
		if ch.Status != nil {
			if err := CheckTransition(cur.Status, *ch.Status); err != nil {
				return r, err
			}
			next.Status = *ch.Status
			data := StatusEvent{
				RiskID:    pmapi.FormatID(IDPrefix, id),
				ProjectID: pmapi.FormatID(project.IDPrefix, cur.ProjectID),
				From:      cur.Status,
				To:        next.Status,
			}
			events = append(events, event.Event{Type: "risk.status_changed", Data: data})
			switch next.Status {
			case Open:
				events = append(events, event.Event{Type: "risk.opened", Data: data})
			case Resolved:
				events = append(events, event.Event{Type: "risk.resolved", Data: data})
			}
		}
		validate.Set(&next.Title, ch.Title)
		validate.Set(&next.Description, ch.Description)
		validate.Set(&next.Severity, ch.Severity)
		if ch.OwnerID != nil {
			next.OwnerID = *ch.OwnerID
			if err := storekit.CheckUsers(ctx, tx, ws, storekit.User("ownerId", next.OwnerID)); err != nil {
				return r, err
			}
		}
		if r, err = record.Scan(tx.QueryRow(ctx, `update risks r
			set status = $3, title = $4, description = $5, severity = $6, owner_id = $7, updated_at = now()
			where r.workspace_id = $1 and r.id = $2 returning `+columns,
			ws, id, next.Status, next.Title, next.Description, next.Severity, next.OwnerID)); err != nil {
			return r, err
		}
		events = append(events, event.Event{Type: "risk.updated", Data: ToView(r)})
		return r, s.Events.Emit(ctx, tx, shard, ws, events...)
	})
}

// SetArchived archives or restores; repeating it changes and emits nothing.
func (s Store) SetArchived(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, archived bool) (Risk, error) {
	return archival.Run(ctx, shard, s.Events, ws, id, archived)
}

var archival = storekit.Archival[Risk]{Noun: "risk", Lock: record.Lock, Apply: storekit.Returning(record.Scan),
	Archive: `update risks r set archived_at = now(), updated_at = now()
		where r.workspace_id = $1 and r.id = $2 returning ` + columns,
	Restore: `update risks r set archived_at = null, updated_at = now()
		where r.workspace_id = $1 and r.id = $2 returning ` + columns,
	ArchivedAt: func(r Risk) *time.Time { return r.ArchivedAt }, View: func(r Risk) any { return ToView(r) }}

// EventTypes documents the events risks emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "risk.created", Description: "A risk is registered", Payload: View{}},
		{Name: "risk.updated", Description: "A risk is edited (status moves included)", Payload: View{}},
		{Name: "risk.status_changed", Description: "A risk's status moves", Payload: StatusEvent{}},
		{Name: "risk.opened", Description: "A risk becomes OPEN again (sent back or reopened)", Payload: StatusEvent{}},
		{Name: "risk.resolved", Description: "A risk becomes RESOLVED", Payload: StatusEvent{}},
		{Name: "risk.archived", Description: "A risk is archived", Payload: View{}},
		{Name: "risk.restored", Description: "An archived risk is restored", Payload: View{}},
		{Name: "risk.deleted", Description: "A risk is deleted (with its project)", Payload: DeletedEvent{}},
	}
}

// RemoveInProject deletes the risks of a project being deleted, inside its
// transaction, and returns their ids (the project store emits risk.deleted).
var RemoveInProject = storekit.Removal("delete from risks where workspace_id = $1 and project_id = $2 returning id")
