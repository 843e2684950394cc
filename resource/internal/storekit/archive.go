package storekit

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/tenant"
)

// Archival is how a resource archives and restores its rows: archiving
// stamps archived_at once, and repeating either changes and emits nothing
// (docs/decisions/tenancy-and-citus.md).
type Archival[T any] struct {
	// Noun names the events: "task" emits task.archived and task.restored,
	// each carrying View of the row.
	Noun string
	// Archive and Restore are the two whole statements on the row ($1 the
	// workspace, $2 the id): Go picks one, since Citus refuses now() inside
	// CASE in an UPDATE.
	Archive, Restore string
	// Lock reads the row for update.
	Lock func(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (T, error)
	// Apply runs one of the statements and answers the row after it.
	Apply func(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) (T, error)
	// Read, for a resource that reads its row with one function whether
	// locking or not, stands for both: Lock is Read for update, and Apply
	// runs a statement that returns nothing and Reads the row after it.
	Read func(ctx context.Context, q Querier, ws, id uuid.UUID, forUpdate bool) (T, error)
	// ArchivedAt is the row's stamp.
	ArchivedAt func(T) *time.Time
	View       func(T) any
	// Detail, for a resource whose detail GET shows more than View of the
	// row (an analysis with its corrective actions), reads that inside the
	// change's transaction: what an If-Match is compared with.
	Detail func(ctx context.Context, tx pgx.Tx, ws uuid.UUID, row T) (any, error)
}

// Set archives or restores the row inside tx, emitting with events.
func (a Archival[T]) Set(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	events event.Emitter,
	ws, id uuid.UUID,
	archived bool,
) (T, error) {
	if a.Read != nil {
		a.Lock = func(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (T, error) {
			return a.Read(ctx, tx, ws, id, true)
		}
		a.Apply = Reread(func(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (T, error) {
			return a.Read(ctx, tx, ws, id, false)
		})
	}
	cur, err := a.Lock(ctx, tx, ws, id)
	if err != nil {
		return cur, err
	}
	if err := api.IfMatchRead(ctx, id, func() (any, error) {
		if a.Detail != nil {
			return a.Detail(ctx, tx, ws, cur)
		}
		return a.View(cur), nil
	}); err != nil {
		return cur, err
	}
	if (a.ArchivedAt(cur) != nil) == archived {
		return cur, nil
	}
	sql, typ := a.Restore, a.Noun+".restored"
	if archived {
		sql, typ = a.Archive, a.Noun+".archived"
	}
	row, err := a.Apply(ctx, tx, sql, ws, id)
	if err != nil {
		return row, err
	}
	return row, events.Emit(ctx, tx, shard, ws, event.Event{Type: typ, Data: a.View(row)})
}

// Run is Set in a transaction of its own: an archive or restore on its own
// route rather than inside a batch or another change.
func (a Archival[T]) Run(
	ctx context.Context,
	shard *tenant.Shard,
	events event.Emitter,
	ws, id uuid.UUID,
	archived bool,
) (T, error) {
	return Tx(ctx, shard, ws, func(tx pgx.Tx) (T, error) { return a.Set(ctx, tx, shard, events, ws, id, archived) })
}

// Returning is the Apply of a statement that returns the row's columns, read
// by scan.
func Returning[T any](scan Scan[T]) func(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) (T, error) {
	return func(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) (T, error) {
		return scan(tx.QueryRow(ctx, sql, ws, id))
	}
}

// Reread is the Apply of a statement that returns nothing: read answers the
// row after it.
func Reread[T any](
	read func(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (T, error),
) func(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) (T, error) {
	return func(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) (T, error) {
		if _, err := tx.Exec(ctx, sql, ws, id); err != nil {
			var zero T
			return zero, err
		}
		return read(ctx, tx, ws, id)
	}
}
