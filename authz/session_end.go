package authz

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// EndSession revokes the session whose sid value is given, in workspace ws:
// sign-out. The row stays (revoked_at set) until the sweep removes it. An
// unknown or already ended session is INVALID_TOKEN, as VerifySession says.
func EndSession(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, sid string) error {
	if !strings.HasPrefix(sid, SessionPrefix) || len(sid) != len(SessionPrefix)+40 {
		return pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
	}
	var ended int64
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `update sessions set revoked_at = now()
			where workspace_id = $1 and token_hash = $2 and revoked_at is null`, ws, hashSecret(sid))
		ended = tag.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if ended == 0 {
		return pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
	}
	return nil
}
