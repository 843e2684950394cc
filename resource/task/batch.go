package task

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

// Kinds of batch operation, as the `op` field names them.
const (
	OpCreate  = "create"
	OpUpdate  = "update"
	OpArchive = "archive"
	OpRestore = "restore"
)

// OpKinds lists every kind of batch operation.
var OpKinds = []string{OpCreate, OpUpdate, OpArchive, OpRestore}

// Op is one validated operation of a batch: New for a create, ID (and Changes
// for an update) for the others.
type Op struct {
	Kind    string
	New     NewTask
	ID      uuid.UUID
	Changes Changes
}

// Do runs one operation in its own transaction, as its single-task endpoint
// would.
func (s Store) Do(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (Task, error) {
	return storekit.Do(ctx, shard, ws, op, s.run)
}

// DoAtomic runs ops in order in one transaction: all of them commit, with their
// events, or the first failure (a *storekit.FailedOp) rolls every one back.
func (s Store) DoAtomic(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ops []Op) ([]Task, error) {
	return storekit.DoAtomic(ctx, shard, ws, ops, s.run)
}

func (s Store) run(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, op Op) (Task, error) {
	switch op.Kind {
	case OpCreate:
		return s.create(ctx, tx, shard, ws, op.New)
	case OpUpdate:
		return s.update(ctx, tx, shard, ws, op.ID, op.Changes)
	case OpArchive:
		return archival.Set(ctx, tx, shard, s.Events, ws, op.ID, true)
	case OpRestore:
		return archival.Set(ctx, tx, shard, s.Events, ws, op.ID, false)
	}
	return Task{}, fmt.Errorf("unknown batch operation %q", op.Kind)
}
