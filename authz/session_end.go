package authz

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// EndSession revokes the session whose sid value is given, in workspace ws:
// sign-out. The row stays (revoked_at set) until the sweep removes it. An
// unknown or already ended session is INVALID_TOKEN, as VerifySession says.
func EndSession(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, sid string) error {
	if !strings.HasPrefix(sid, SessionPrefix) || len(sid) != len(SessionPrefix)+40 {
		return pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
	}
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var id uuid.UUID
		err := tx.QueryRow(ctx, `update sessions set revoked_at = now()
			where workspace_id = $1 and token_hash = $2 and revoked_at is null returning id`, ws, hashSecret(sid)).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.SessionEnded, audit.Target{Type: "session", ID: id.String()})
	})
}
