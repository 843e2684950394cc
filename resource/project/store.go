package project

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/tenant"
)

// Store reads and writes projects.
type Store struct {
	Events event.Emitter
	// Children are the resources living in projects (every registration's
	// cascade), removed with their project.
	Children []facet.Cascade
}

// columns reads a project with its members. The members subquery names the
// workspace parameter ($1 in every statement that uses it), not p.workspace_id:
// Citus routes a statement to one shard only when each query level says which
// workspace, and refuses FOR UPDATE otherwise.
const columns = `p.id, p.name, p.description, p.owner_id, p.rag_status, p.start_date::text, p.target_date::text,
	coalesce((select json_agg(json_build_object('userId', m.user_id, 'role', m.role, 'addedAt', m.added_at)
			order by m.added_at, m.user_id)
		from project_members m where m.workspace_id = $1 and m.project_id = p.id), '[]'),
	p.created_at, p.updated_at, p.archived_at`

func scan(row pgx.Row) (Project, error) {
	var p Project
	var start, target *string
	var members []byte
	err := row.Scan(
		&p.ID,
		&p.Name,
		&p.Description,
		&p.OwnerID,
		&p.RAGStatus,
		&start,
		&target,
		&members,
		&p.CreatedAt,
		&p.UpdatedAt,
		&p.ArchivedAt,
	)
	if err := storekit.Found(err, "project"); err != nil {
		return p, err
	}
	p.StartDate, p.TargetDate = (*Date)(start), (*Date)(target)
	if err := json.Unmarshal(members, &p.Members); err != nil {
		return p, err
	}
	return p, nil
}

const getSQL = "select " + columns + " from projects p where p.workspace_id = $1 and p.id = $2"

func get(ctx context.Context, q storekit.Querier, ws, id uuid.UUID, lock bool) (Project, error) {
	sql := getSQL
	if lock {
		sql += " for update"
	}
	return scan(q.QueryRow(ctx, sql, ws, id))
}

// Get returns one project.
func (s Store) Get(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Project, error) {
	return storekit.Get(ctx, shard, ws, scan, getSQL, ws, id)
}

// Filter selects projects for a list.
type Filter struct {
	RAGStatus       string
	OwnerID         *uuid.UUID
	Q               string
	IncludeArchived bool
	Page            api.Keyset // updatedSince, the order and where the page starts
	Limit           int
}

// List returns a page of projects, newest first.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter) ([]Project, error) {
	w := storekit.NewWhere("p", ws)
	w.Equal("rag_status", f.RAGStatus)
	w.Equal("owner_id", f.OwnerID)
	w.Contains(f.Q, "name")
	w.Live(f.IncludeArchived)
	w.Page(f.Page)
	sql := "select " + columns + " from projects p where " + w.SQL() + " order by " + w.Order() +
		" limit " + storekit.Limit(f.Limit)
	return storekit.List(ctx, shard, ws, scan, sql, w.Args()...)
}

// NewProject is a validated create.
type NewProject struct {
	Settings
	MemberIDs []uuid.UUID
}

// Create writes a project and its first members, emitting project.created and a
// project.member_added per member.
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewProject) (Project, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (p Project, err error) {
		users := append([]uuid.UUID(nil), in.MemberIDs...)
		if in.OwnerID != nil {
			if err := storekit.CheckUsers(ctx, tx, ws, storekit.User("ownerId", in.OwnerID)); err != nil {
				return p, err
			}
		}
		if err := storekit.CheckUsers(ctx, tx, ws, storekit.Users("memberIds", users...)); err != nil {
			return p, err
		}
		id := pmapi.NewID()
		if _, err := tx.Exec(ctx, `insert into projects
			(workspace_id, id, name, description, owner_id, rag_status, start_date, target_date)
			values ($1, $2, $3, $4, $5, $6, $7::date, $8::date)`, ws, id, in.Name, in.Description, in.OwnerID, in.RAGStatus,
			(*string)(in.StartDate), (*string)(in.TargetDate)); err != nil {
			return p, err
		}
		var events []event.Event
		for u := range uniq(in.MemberIDs) {
			if _, err := tx.Exec(ctx, `insert into project_members (workspace_id, project_id, user_id)
				values ($1, $2, $3)`, ws, id, u); err != nil {
				return p, err
			}
			events = append(
				events,
				event.Event{
					Type: "project.member_added",
					Data: MemberEvent{ProjectID: pmapi.FormatID(IDPrefix, id), UserID: u.String(), Role: RoleMember},
				},
			)
		}
		if p, err = get(ctx, tx, ws, id, false); err != nil {
			return p, err
		}
		events = append([]event.Event{{Type: "project.created", Data: ToView(p)}}, events...)
		return p, s.Events.Emit(ctx, tx, shard, ws, events...)
	})
}

// Update applies the given fields and emits project.updated when anything changed.
func (s Store) Update(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, f Fields) (Project, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (p Project, err error) {
		cur, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return p, err
		}
		if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
			return p, err
		}
		next := cur
		validate.Set(&next.Name, f.Name)
		validate.Set(&next.Description, f.Description)
		if f.OwnerID != nil {
			next.OwnerID = *f.OwnerID
			if next.OwnerID != nil {
				if err := storekit.CheckUsers(ctx, tx, ws, storekit.User("ownerId", next.OwnerID)); err != nil {
					return p, err
				}
			}
		}
		validate.Set(&next.RAGStatus, f.RAGStatus)
		validate.Set(&next.StartDate, f.StartDate)
		validate.Set(&next.TargetDate, f.TargetDate)
		if err := ValidDates(next.StartDate, next.TargetDate); err != nil {
			return p, err
		}
		if _, err := tx.Exec(ctx, `update projects set name = $3, description = $4, owner_id = $5, rag_status = $6,
			start_date = $7::date, target_date = $8::date, updated_at = now() where workspace_id = $1 and id = $2`,
			ws, id, next.Name, next.Description, next.OwnerID, next.RAGStatus,
			(*string)(next.StartDate), (*string)(next.TargetDate)); err != nil {
			return p, err
		}
		if p, err = get(ctx, tx, ws, id, false); err != nil {
			return p, err
		}
		return p, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "project.updated", Data: ToView(p)})
	})
}

// SetArchived archives (true) or restores (false) a project. Doing it twice is
// harmless: the second call changes nothing and emits nothing.
func (s Store) SetArchived(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, archived bool) (Project, error) {
	return archival.Run(ctx, shard, s.Events, ws, id, archived)
}

var archival = storekit.Archival[Project]{Noun: "project",
	Archive:    `update projects set archived_at = now(), updated_at = now() where workspace_id = $1 and id = $2`,
	Restore:    `update projects set archived_at = null, updated_at = now() where workspace_id = $1 and id = $2`,
	Read:       get,
	ArchivedAt: func(p Project) *time.Time { return p.ArchivedAt }, View: func(p Project) any { return ToView(p) }}

// Delete removes an archived project and everything in it, emitting the deleted
// event of every child and then project.deleted. An active project is CONFLICT.
func (s Store) Delete(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (map[string]int, error) {
	counts := map[string]int{}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		clear(counts)
		cur, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return err
		}
		if cur.ArchivedAt == nil {
			return pmapi.Errorf(pmapi.CodeConflict, "only an archived project can be deleted; archive it first")
		}
		projectID := pmapi.FormatID(IDPrefix, id)
		var events []event.Event
		for _, child := range s.Children {
			ids, err := child.Remove(ctx, tx, ws, id)
			if err != nil {
				return err
			}
			for _, cid := range ids {
				events = append(events, event.Event{Type: child.Event, Data: map[string]string{
					child.IDField: pmapi.FormatID(child.IDPrefix, cid), "projectId": projectID,
				}})
			}
			counts[camel(child.Table)] = len(ids)
		}
		tag, err := tx.Exec(ctx, "delete from project_members where workspace_id = $1 and project_id = $2", ws, id)
		if err != nil {
			return err
		}
		counts["members"] = int(tag.RowsAffected())
		if _, err := tx.Exec(ctx, "delete from projects where workspace_id = $1 and id = $2", ws, id); err != nil {
			return err
		}
		events = append(events, event.Event{Type: "project.deleted", Data: DeletedEvent{ProjectID: projectID}})
		return s.Events.Emit(ctx, tx, shard, ws, events...)
	})
	return counts, err
}

// AddMember adds a user to a project (CONFLICT if already a member).
func (s Store) AddMember(
	ctx context.Context,
	shard *tenant.Shard,
	ws, projectID, user uuid.UUID,
	role string,
) (Project, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (p Project, err error) {
		if _, err := get(ctx, tx, ws, projectID, true); err != nil {
			return p, err
		}
		if err := storekit.CheckUsers(ctx, tx, ws, storekit.User("userId", &user)); err != nil {
			return p, err
		}
		_, err = tx.Exec(
			ctx,
			`insert into project_members (workspace_id, project_id, user_id, role) values ($1, $2, $3, $4)`,
			ws,
			projectID,
			user,
			role,
		)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return p, pmapi.Errorf(pmapi.CodeConflict, "the user is already a member of this project")
		}
		if err != nil {
			return p, err
		}
		if p, err = get(ctx, tx, ws, projectID, false); err != nil {
			return p, err
		}
		return p, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "project.member_added",
			Data: MemberEvent{ProjectID: pmapi.FormatID(IDPrefix, projectID), UserID: user.String(), Role: role}})
	})
}

// RemoveMember removes a user from a project (NOT_FOUND if not a member).
func (s Store) RemoveMember(ctx context.Context, shard *tenant.Shard, ws, projectID, user uuid.UUID) (Project, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (p Project, err error) {
		if _, err := get(ctx, tx, ws, projectID, true); err != nil {
			return p, err
		}
		var role string
		err = tx.QueryRow(ctx, `delete from project_members
			where workspace_id = $1 and project_id = $2 and user_id = $3 returning role`, ws, projectID, user).
			Scan(&role)
		if err := storekit.Found(err, "member"); err != nil {
			return p, err
		}
		if p, err = get(ctx, tx, ws, projectID, false); err != nil {
			return p, err
		}
		return p, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "project.member_removed",
			Data: MemberEvent{ProjectID: pmapi.FormatID(IDPrefix, projectID), UserID: user.String(), Role: role}})
	})
}

// EventTypes documents the events projects emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "project.created", Description: "A project is created", Payload: View{}},
		{Name: "project.updated", Description: "A project's fields change", Payload: View{}},
		{Name: "project.archived", Description: "A project is archived", Payload: View{}},
		{Name: "project.restored", Description: "An archived project is restored", Payload: View{}},
		{
			Name:        "project.deleted",
			Description: "An archived project is deleted with everything in it",
			Payload:     DeletedEvent{},
		},
		{Name: "project.member_added", Description: "A member is added", Payload: MemberEvent{}},
		{Name: "project.member_removed", Description: "A member is removed", Payload: MemberEvent{}},
	}
}

func uniq(ids []uuid.UUID) map[uuid.UUID]bool {
	m := map[uuid.UUID]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// camel is a table's name as a key of the delete's answer, camelCase as every
// key of the API is: rrca_analyses is rrcaAnalyses.
func camel(table string) string {
	parts := strings.Split(table, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
