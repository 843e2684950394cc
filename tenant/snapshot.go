package tenant

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Snapshot runs fn in a read-only REPEATABLE READ transaction bound to
// workspace, on the node that holds it (Route): every statement of fn sees
// the database as of the first, which a read of many tables that must agree
// with each other needs (a workspace's export). On Citus the workspace's
// colocated shards are all on that node, so the one snapshot covers them.
//
// Unlike Tx it never runs fn again: fn may have sent what it read on its way
// (a stream) before a failure. Its error is mapped by DBError.
func (s *Shard) Snapshot(ctx context.Context, workspace uuid.UUID, fn func(tx pgx.Tx) error) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	s.mode.queueSetting(b, workspace, false)
	br := s.pool(ctx, workspace).SendBatch(ctx, b)
	if err := br.Close(); err != nil {
		if tx := br.Tx(); tx != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
		return DBError(err)
	}
	tx := br.Tx()
	// Read only: nothing to commit, and a rollback ends it as well.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return DBError(fn(tx))
}
