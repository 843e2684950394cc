package tenant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
)

// Workspace statuses.
const (
	StatusActive    = "ACTIVE"
	StatusSuspended = "SUSPENDED"
)

// Workspace is a tenant as the directory records it.
type Workspace struct {
	ID              uuid.UUID
	Name            string
	Status          string
	Shard           string
	ConsoleClientID string
	CreatedAt       time.Time
	SuspendedAt     *time.Time
}

// Directory resolves client ids and workspaces. It lives on the default shard.
type Directory struct {
	pool   *pgxpool.Pool
	shards *Shards
}

// NewDirectory reads and writes the directory through the default shard's pool.
func NewDirectory(shards *Shards) *Directory {
	return &Directory{pool: shards.Default.Pool, shards: shards}
}

// Shards returns the shard map the directory places workspaces on.
func (d *Directory) Shards() *Shards { return d.shards }

const workspaceColumns = "id, name, status, shard, console_client_id, created_at, suspended_at"

func scanWorkspace(row pgx.Row) (Workspace, error) {
	var w Workspace
	err := row.Scan(&w.ID, &w.Name, &w.Status, &w.Shard, &w.ConsoleClientID, &w.CreatedAt, &w.SuspendedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, pmapi.NotFound("workspace")
	}
	return w, err
}

// Resolution is what a client id leads to.
type Resolution struct {
	Workspace Workspace
	Shard     *Shard
	// Console is true for the workspace's console client, false for an app.
	Console bool
}

// Resolve maps a client id to its workspace and shard. Unknown ids are NOT_FOUND;
// the caller decides what status that becomes (401 for credentials).
func (d *Directory) Resolve(ctx context.Context, clientID string) (Resolution, error) {
	if !pmapi.LooksLikeClientID(clientID) {
		return Resolution{}, pmapi.NotFound("client")
	}
	var kind string
	var w Workspace
	err := d.pool.QueryRow(ctx, `select c.kind, w.id, w.name, w.status, w.shard, w.console_client_id,
		w.created_at, w.suspended_at
		from client_directory c join workspaces w on w.id = c.workspace_id where c.client_id = $1`, clientID).
		Scan(&kind, &w.ID, &w.Name, &w.Status, &w.Shard, &w.ConsoleClientID, &w.CreatedAt, &w.SuspendedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Resolution{}, pmapi.NotFound("client")
	}
	if err != nil {
		return Resolution{}, DBError(err)
	}
	shard, err := d.shards.Get(w.Shard)
	if err != nil {
		return Resolution{}, err
	}
	return Resolution{Workspace: w, Shard: shard, Console: kind == "CONSOLE"}, nil
}

// ShardOf returns the shard a workspace lives on.
func (d *Directory) ShardOf(w Workspace) (*Shard, error) { return d.shards.Get(w.Shard) }

// Create registers a workspace and its console client on the named shard (the
// default when empty).
func (d *Directory) Create(ctx context.Context, name, shard string) (Workspace, error) {
	if shard == "" {
		shard = d.shards.Default.Name
	}
	if _, err := d.shards.Get(shard); err != nil {
		return Workspace{}, pmapi.Invalid("shard", "shard %q is not configured", shard)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Workspace{}, err
	}
	console := pmapi.NewClientID()
	var w Workspace
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		w, err = scanWorkspace(tx.QueryRow(ctx, `insert into workspaces (id, name, shard, console_client_id)
			values ($1, $2, $3, $4) returning `+workspaceColumns, id, name, shard, console))
		if err != nil {
			return checkViolation(err)
		}
		_, err = tx.Exec(
			ctx,
			`insert into client_directory (client_id, workspace_id, kind) values ($1, $2, 'CONSOLE')`,
			console,
			id,
		)
		return err
	})
	return w, err
}

// Get returns one workspace.
func (d *Directory) Get(ctx context.Context, id uuid.UUID) (Workspace, error) {
	return scanWorkspace(d.pool.QueryRow(ctx, "select "+workspaceColumns+" from workspaces where id = $1", id))
}

// List pages through workspaces in id order (ids are time-ordered UUIDv7s, so
// this is creation order). after is the last id of the previous page.
func (d *Directory) List(ctx context.Context, after *uuid.UUID, limit int) ([]Workspace, error) {
	rows, err := d.pool.Query(ctx, "select "+workspaceColumns+` from workspaces
		where $1::uuid is null or id > $1 order by id limit $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// SetStatus suspends or resumes a workspace.
func (d *Directory) SetStatus(ctx context.Context, id uuid.UUID, status string) (Workspace, error) {
	if status != StatusActive && status != StatusSuspended {
		return Workspace{}, pmapi.Invalid("status", "status must be ACTIVE or SUSPENDED")
	}
	var w Workspace
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var since *time.Time
		err := tx.QueryRow(ctx, "select suspended_at from workspaces where id = $1 for update", id).Scan(&since)
		if errors.Is(err, pgx.ErrNoRows) {
			return pmapi.NotFound("workspace")
		}
		if err != nil {
			return err
		}
		// Go decides suspended_at from the locked row (Citus refuses now() in
		// CASE or COALESCE of an UPDATE): a workspace suspended again keeps the
		// time its suspension began; resuming clears it.
		suspendedAt := "null"
		if status == StatusSuspended {
			suspendedAt = "suspended_at"
			if since == nil {
				suspendedAt = "now()"
			}
		}
		w, err = scanWorkspace(tx.QueryRow(ctx, `update workspaces set status = $2, suspended_at = `+suspendedAt+`
			where id = $1 returning `+workspaceColumns, id, status))
		if err != nil {
			return err
		}
		return Invalidate(ctx, tx, WorkspaceChanged(id))
	})
	return w, err
}

// HoldsData tells whether workspace ws has rows on shard.
type HoldsData func(ctx context.Context, shard *Shard, ws uuid.UUID) (bool, error)

// Place moves a workspace's directory entry to another shard. Rows are not copied
// between databases, so placement is refused while holdsData finds the
// workspace's rows on its current shard (authz.HasUsers: a workspace with data
// has users): move the data first (pg_dump of its rows), then place it.
func (d *Directory) Place(ctx context.Context, id uuid.UUID, shard string, holdsData HoldsData) (Workspace, error) {
	target, err := d.shards.Get(shard)
	if err != nil {
		return Workspace{}, pmapi.Invalid("shard", "shard %q is not configured", shard)
	}
	w, err := d.Get(ctx, id)
	if err != nil {
		return Workspace{}, err
	}
	if w.Shard == target.Name {
		return w, nil
	}
	current, err := d.shards.Get(w.Shard)
	if err != nil {
		return Workspace{}, err
	}
	hasData, err := holdsData(ctx, current, id)
	if err != nil {
		return Workspace{}, err
	}
	if hasData {
		return Workspace{}, pmapi.Errorf(
			pmapi.CodeConflict,
			"workspace has data on shard %q; move its rows before placing it on %q",
			w.Shard,
			shard,
		)
	}
	return scanWorkspace(
		d.pool.QueryRow(ctx, "update workspaces set shard = $2 where id = $1 returning "+workspaceColumns, id, shard),
	)
}

func checkViolation(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23514" {
		return pmapi.Errorf(pmapi.CodeValidation, "invalid value: %s", pgErr.ConstraintName).Wrap(err)
	}
	return fmt.Errorf("directory: %w", err)
}

// WorkspacesOn lists the ids of the workspaces placed on shard, for maintenance
// jobs that must visit each one under its own setting.
func (d *Directory) WorkspacesOn(ctx context.Context, shard string) ([]uuid.UUID, error) {
	rows, err := d.pool.Query(ctx, "select id from workspaces where shard = $1 order by id", shard)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// RegisterClient records an app's client id for workspace ws. The app row itself
// lives on the workspace's shard; this entry is what lets a request find it.
func (d *Directory) RegisterClient(ctx context.Context, clientID string, ws uuid.UUID) error {
	_, err := d.pool.Exec(
		ctx,
		`insert into client_directory (client_id, workspace_id, kind) values ($1, $2, 'APP')`,
		clientID,
		ws,
	)
	return err
}

// UnregisterClient forgets an app's client id; it also tells every instance to
// drop what it cached for that client.
func (d *Directory) UnregisterClient(ctx context.Context, clientID string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `delete from client_directory where client_id = $1 and kind = 'APP'`, clientID)
		if err != nil {
			return err
		}
		return Invalidate(ctx, tx, ClientChanged(clientID))
	})
}

// Pool is the directory's connection pool, for the few server-wide tables that
// live beside it (OAuth signing keys, user-code routing).
func (d *Directory) Pool() *pgxpool.Pool { return d.pool }
