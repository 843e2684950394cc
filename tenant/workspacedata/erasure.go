package workspacedata

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// Erasure is the progress of a workspace's erasure, from its workspace_erasures
// row.
type Erasure struct {
	StartedAt time.Time
	UpdatedAt time.Time
	// TablesDone of TablesTotal tenant tables have been emptied; TablesTotal
	// is 0 until the job has read the catalog.
	TablesDone, TablesTotal int
	// LastError is why the job's last run stopped; River runs it again.
	LastError *string
}

// Erasure states, as the admin API shows them.
const (
	StateQueued   = "QUEUED"
	StateRunning  = "RUNNING"
	StateRetrying = "RETRYING"
)

// State is QUEUED until the job has started, RETRYING after a run that
// failed, RUNNING otherwise.
func (e Erasure) State() string {
	switch {
	case e.LastError != nil:
		return StateRetrying
	case e.TablesTotal == 0:
		return StateQueued
	}
	return StateRunning
}

const erasureColumns = "started_at, updated_at, tables_done, tables_total, last_error"

// ErasureOf returns the workspace's erasure under way, or nil when there is
// none.
func ErasureOf(ctx context.Context, dir *tenant.Directory, id uuid.UUID) (*Erasure, error) {
	var e Erasure
	err := dir.Pool().QueryRow(ctx, "select "+erasureColumns+" from workspace_erasures where id = $1", id).
		Scan(&e.StartedAt, &e.UpdatedAt, &e.TablesDone, &e.TablesTotal, &e.LastError)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, tenant.DBError(err)
	}
	return &e, nil
}

// Start begins the erasure of workspace id in one transaction on the
// directory: it records the erasure, deletes the workspace's directory entries
// (its client ids, so every credential of it is refused from the commit on:
// 401, on every instance once the invalidation sent with it arrives; its
// device-flow user codes; its people's emails), and queues the job that
// deletes the rest. Starting an erasure already under way queues no second job
// (but a new one when River discarded the first after its last attempt). An unknown workspace is NOT_FOUND.
func Start(ctx context.Context, dir *tenant.Directory, id uuid.UUID) (*Erasure, error) {
	catalog, err := ReadCatalog(ctx, dir.Pool())
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, dir.Pool(), func(tx pgx.Tx) error {
		var found bool
		err := tx.QueryRow(ctx, "select true from workspaces where id = $1 for update", id).Scan(&found)
		if errors.Is(err, pgx.ErrNoRows) {
			return pmapi.NotFound("workspace")
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "insert into workspace_erasures (id) values ($1) on conflict (id) do nothing",
			id); err != nil {
			return err
		}
		if err := deleteDirectoryEntries(ctx, tx, catalog, id); err != nil {
			return err
		}
		if err := tenant.Invalidate(ctx, tx, tenant.WorkspaceChanged(id)); err != nil {
			return err
		}
		// Unique by its arguments: an erasure under way keeps its one job, and
		// one whose job River gave up on gets a new one.
		return enqueue(ctx, tx, id)
	})
	if err != nil {
		return nil, tenant.DBError(err)
	}
	return ErasureOf(ctx, dir, id)
}

// deleteDirectoryEntries deletes the workspace's rows of every directory
// table but workspaces (and workspace_erasures, which has no workspace_id).
func deleteDirectoryEntries(ctx context.Context, tx pgx.Tx, catalog Catalog, id uuid.UUID) error {
	for _, t := range catalog.Directory() {
		if _, err := tx.Exec(ctx, "delete from "+t.ident()+" where workspace_id = $1", id); err != nil {
			return err
		}
	}
	return nil
}
