package task

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
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Store reads and writes tasks.
type Store struct {
	Events event.Emitter
}

const columns = `t.id, t.project_id, t.title, t.description, t.status, t.priority, t.assignee_id, t.reporter_id,
	t.start_date, t.due_date, t.created_at, t.updated_at, t.archived_at`

// fields are where the columns go in a Task.
func fields(t *Task) []any {
	return []any{
		&t.ID,
		&t.ProjectID,
		&t.Title,
		storekit.NullString(&t.Description),
		storekit.OneOf(&t.Status, Statuses),
		&t.Priority,
		storekit.NullUUID(
			&t.AssigneeID,
		),
		storekit.NullUUID(&t.ReporterID),
		storekit.NullTime(&t.StartDate),
		storekit.NullTime(&t.DueDate),
		&t.CreatedAt,
		&t.UpdatedAt,
		storekit.NullTime(&t.ArchivedAt),
	}
}

const getSQL = "select " + columns + " from tasks t where t.workspace_id = $1 and t.id = $2"

// record reads a task by id.
var record = storekit.Record[Task]{Noun: "task", ByID: getSQL, Fields: fields, JSON: viewJSON}

// Get returns one task.
func (s Store) Get(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Task, error) {
	return record.Get(ctx, shard, ws, id)
}

// Detail appends one task's view to b (api.DetailRow).
func (s Store) Detail(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, b []byte) ([]byte, error) {
	return record.Detail(ctx, shard, ws, id, b)
}

// Filter selects tasks for a list. Time bounds are half-open: an After bound
// includes its instant and a Before bound excludes it, so adjacent windows
// neither overlap nor leave a gap.
type Filter struct {
	ProjectID       *uuid.UUID
	Status          string
	AssigneeID      *uuid.UUID
	Q               string
	DueAfter        *time.Time
	DueBefore       *time.Time
	CreatedAfter    *time.Time
	CreatedBefore   *time.Time
	IncludeArchived bool
	Page            api.Keyset // updatedSince, the order and where the page starts
	Limit           int
}

// List writes a page of tasks' views, newest first, into rows (api.ListRows).
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error {
	w := storekit.NewWhere("t", ws)
	w.Equal("project_id", f.ProjectID)
	w.Equal("status", f.Status)
	w.Equal("assignee_id", f.AssigneeID)
	w.Contains(f.Q, "title")
	w.Within("due_date", f.DueAfter, f.DueBefore)
	w.Within("created_at", f.CreatedAfter, f.CreatedBefore)
	w.Live(f.IncludeArchived)
	w.Page(f.Page)
	sql := "select " + columns + " from tasks t where " + w.SQL() + " order by " + w.Order() +
		" limit " + storekit.Limit(f.Limit)
	return storekit.ListJSON(ctx, shard, ws, f.Limit, viewJSON, rows, sql, w.Args()...)
}

// Create writes a task, emitting task.created (and task.assigned when it is
// created with an assignee).
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewTask) (Task, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (Task, error) { return s.create(ctx, tx, shard, ws, in) })
}

func (s Store) create(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, in NewTask) (Task, error) {
	if err := project.Hold(ctx, tx, ws, in.ProjectID); err != nil {
		return Task{}, err
	}
	assignee, reporter := storekit.User("assigneeId", in.AssigneeID), storekit.User("reporterId", in.ReporterID)
	if err := storekit.CheckUsers(ctx, tx, ws, assignee, reporter); err != nil {
		return Task{}, err
	}
	// The text's copy for search goes in the same statement (migration 0015).
	t, err := record.Scan(
		tx.QueryRow(
			ctx,
			`with t as (insert into tasks as t (workspace_id, id, project_id, title, description, priority,
			assignee_id, reporter_id, start_date, due_date)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning `+columns+`),
		d as (insert into task_search (workspace_id, id, title, description) values ($1, $2, $4, $5))
		select * from t`,
			ws,
			pmapi.NewID(),
			in.ProjectID,
			in.Title,
			in.Description,
			in.Priority,
			in.AssigneeID,
			in.ReporterID,
			in.StartDate,
			in.DueDate,
		),
	)
	if err != nil {
		return t, err
	}
	events := []event.Event{{Type: "task.created", Data: ToView(t)}}
	if t.AssigneeID != nil {
		events = append(events, event.Event{Type: "task.assigned", Data: assigned(t.ID, nil, t.AssigneeID)})
	}
	return t, s.Events.Emit(ctx, tx, shard, ws, events...)
}

// Update applies changes. A refused status move writes nothing; an update that
// changes nothing writes nothing and emits nothing. Otherwise it emits
// task.status_changed and task.assigned for those changes, then task.updated.
func (s Store) Update(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, ch Changes) (Task, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (Task, error) { return s.update(ctx, tx, shard, ws, id, ch) })
}

func (s Store) update(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, id uuid.UUID, ch Changes) (Task, error) {
	cur, err := record.Lock(ctx, tx, ws, id)
	if err != nil {
		return cur, err
	}
	if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
		return cur, err
	}
	next, err := apply(cur, ch)
	if err != nil {
		return cur, err
	}
	if same(cur, next) {
		return cur, nil
	}
	var users []storekit.UserField
	if !eqPtr(cur.AssigneeID, next.AssigneeID) {
		users = append(users, storekit.User("assigneeId", next.AssigneeID))
	}
	if !eqPtr(cur.ReporterID, next.ReporterID) {
		users = append(users, storekit.User("reporterId", next.ReporterID))
	}
	if err := storekit.CheckUsers(ctx, tx, ws, users...); err != nil {
		return cur, err
	}
	t, err := record.Scan(tx.QueryRow(
		ctx,
		`update tasks as t set status = $3, title = $4, description = $5, priority = $6,
			assignee_id = $7, reporter_id = $8, start_date = $9, due_date = $10, updated_at = now()
		where t.workspace_id = $1 and t.id = $2 returning `+columns,
		ws,
		id,
		next.Status,
		next.Title,
		next.Description,
		next.Priority,
		next.AssigneeID,
		next.ReporterID,
		next.StartDate,
		next.DueDate,
	))
	if err != nil {
		return t, err
	}
	// Only a change of text reaches search's copy, its tsvector and its GIN
	// indexes: a status change stays off them (migration 0015).
	if cur.Title != t.Title || !eqPtr(cur.Description, t.Description) {
		if _, err := tx.Exec(ctx, `update task_search set title = $3, description = $4 where workspace_id = $1 and id = $2`,
			ws, id, t.Title, t.Description); err != nil {
			return t, err
		}
	}
	var events []event.Event
	if cur.Status != t.Status {
		events = append(events, event.Event{Type: "task.status_changed",
			Data: StatusChangedEvent{TaskID: pmapi.FormatID(IDPrefix, id), From: cur.Status, To: t.Status}})
	}
	if !eqPtr(cur.AssigneeID, t.AssigneeID) {
		events = append(events, event.Event{Type: "task.assigned", Data: assigned(id, cur.AssigneeID, t.AssigneeID)})
	}
	events = append(events, event.Event{Type: "task.updated", Data: ToView(t)})
	return t, s.Events.Emit(ctx, tx, shard, ws, events...)
}

func assigned(id uuid.UUID, from, to *uuid.UUID) AssignedEvent {
	return AssignedEvent{
		TaskID: pmapi.FormatID(IDPrefix, id),
		From:   pmapi.FormatOptionalUserID(from),
		To:     pmapi.FormatOptionalUserID(to),
	}
}

// SetArchived archives (true) or restores (false) a task. Doing it twice is
// harmless: the second call changes nothing and emits nothing.
func (s Store) SetArchived(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, archived bool) (Task, error) {
	return archival.Run(ctx, shard, s.Events, ws, id, archived)
}

var archival = storekit.Archival[Task]{Noun: "task", Lock: record.Lock, Apply: storekit.Returning(record.Scan),
	Archive: `update tasks as t set archived_at = now(), updated_at = now()
		where t.workspace_id = $1 and t.id = $2 returning ` + columns,
	Restore: `update tasks as t set archived_at = null, updated_at = now()
		where t.workspace_id = $1 and t.id = $2 returning ` + columns,
	ArchivedAt: func(t Task) *time.Time { return t.ArchivedAt }, View: func(t Task) any { return ToView(t) }}

// EventTypes documents the events tasks emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "task.created", Description: "A task is created", Payload: View{}},
		{
			Name:        "task.updated",
			Description: "Any field of a task changes, status and assignee included (after their own events)",
			Payload:     View{},
		},
		{Name: "task.status_changed", Description: "A task's status changes", Payload: StatusChangedEvent{}},
		{
			Name:        "task.assigned",
			Description: "A task's assignee changes, including at creation with an assignee and on unassignment",
			Payload:     AssignedEvent{},
		},
		{Name: "task.archived", Description: "A task is archived", Payload: View{}},
		{Name: "task.restored", Description: "An archived task is restored", Payload: View{}},
		{Name: "task.deleted", Description: "A task is deleted with its project", Payload: DeletedEvent{}},
	}
}

// RemoveInProject deletes the tasks of a project being deleted, inside its
// transaction, and returns their ids (the project store emits task.deleted).
var RemoveInProject = storekit.Removal("delete from tasks where workspace_id = $1 and project_id = $2 returning id")
