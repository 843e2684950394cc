package idempotency

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Sweep deletes the workspace's records past their window, inside tx (the
// maintenance job's per-workspace transaction): a key older than Window is
// never replayed, so its row only takes space.
func Sweep(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
	_, err := tx.Exec(
		ctx,
		"delete from idempotency_keys where workspace_id = $1 and created_at < $2",
		ws,
		time.Now().Add(-Window),
	)
	return err
}
