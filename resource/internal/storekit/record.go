package storekit

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// Record is how a resource reads one of its rows by id, the reads every
// resource's store makes alike: as a T (Get, and Lock inside a change), or
// as its view written straight from PostgreSQL's wire values (Detail). The
// statements stay the resource's own.
type Record[T any] struct {
	// Noun names the row's not-found: "risk".
	Noun string
	// ByID selects the row's columns with $1 the workspace and $2 the id.
	ByID string
	// Fields are where the columns go in a T.
	Fields func(*T) []any
	// JSON writes the view of the same columns (NewRowJSON); nil where the
	// resource answers no row as JSON.
	JSON *RowJSON
}

// Scan reads one row of the columns into a T; no row is Noun's not-found.
func (r Record[T]) Scan(row pgx.Row) (T, error) {
	var v T
	err := row.Scan(r.Fields(&v)...)
	return v, Found(err, r.Noun)
}

// Lock reads the row for a change, holding it until the transaction ends.
func (r Record[T]) Lock(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (T, error) {
	return r.Scan(tx.QueryRow(ctx, r.ByID+" for update", ws, id))
}

// Get reads the row in one round trip.
func (r Record[T]) Get(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (T, error) {
	return Get(ctx, shard, ws, r.Scan, r.ByID, ws, id)
}

// Detail appends the row's view to b (api.DetailRow).
func (r Record[T]) Detail(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, b []byte) ([]byte, error) {
	return GetJSON(ctx, shard, ws, r.JSON, b, r.Noun, r.ByID, ws, id)
}

// Removal is a resource's part of a project delete (facet.Cascade's Remove):
// sql deletes the resource's rows of the project ($1 the workspace, $2 the
// project) inside the delete's transaction, returning their ids, for which
// the project store emits the deleted events.
func Removal(sql string) func(ctx context.Context, tx pgx.Tx, ws, project uuid.UUID) ([]uuid.UUID, error) {
	return func(ctx context.Context, tx pgx.Tx, ws, project uuid.UUID) ([]uuid.UUID, error) {
		return IDs(tx.Query(ctx, sql, ws, project))
	}
}
