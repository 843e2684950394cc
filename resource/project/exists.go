package project

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
)

// Exists refuses, in the transaction of a write that names a project, an id
// that names no project of the workspace (404, as a malformed one): the
// other resources ask here rather than read the projects table themselves.
func Exists(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) error {
	return find(ctx, tx, "select 1 from projects where workspace_id = $1 and id = $2", ws, id)
}

// Hold is Exists that also holds the project until tx ends (a key-share
// lock): a concurrent delete of the project waits for the write that adds a
// child to it, and then removes the child with its event, instead of racing
// it.
func Hold(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) error {
	return find(ctx, tx, "select 1 from projects where workspace_id = $1 and id = $2 for key share", ws, id)
}

func find(ctx context.Context, tx pgx.Tx, sql string, ws, id uuid.UUID) error {
	var one int
	return storekit.Found(tx.QueryRow(ctx, sql, ws, id).Scan(&one), "project")
}
