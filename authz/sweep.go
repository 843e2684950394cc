package authz

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// KeepExpiredSessions is how long a session row outlives its expiry, so recent
// sign-ins can still be audited.
const KeepExpiredSessions = 7 * 24 * time.Hour

// SweepSessions deletes the workspace's sessions KeepExpiredSessions past
// expiry, inside tx (the maintenance job's per-workspace transaction).
func SweepSessions(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
	_, err := tx.Exec(
		ctx,
		"delete from sessions where workspace_id = $1 and expires_at < $2",
		ws,
		time.Now().Add(-KeepExpiredSessions),
	)
	return err
}

// SweepDeviceCodes deletes the workspace's OAuth device codes a day past
// expiry: undecided or unredeemed codes are of no further use, and the day keeps
// a late poll answered expired_token rather than invalid_grant.
func SweepDeviceCodes(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
	_, err := tx.Exec(
		ctx,
		"delete from oauth_device_codes where workspace_id = $1 and expires_at < now() - interval '1 day'",
		ws,
	)
	return err
}

// SweepUserCodes deletes user codes a day past expiry from the directory: they
// route the verification page to a workspace, and past expiry they route
// nowhere.
func SweepUserCodes(ctx context.Context, dir *tenant.Directory) error {
	_, err := dir.Pool().Exec(ctx, "delete from oauth_user_codes where expires_at < now() - interval '1 day'")
	return err
}
