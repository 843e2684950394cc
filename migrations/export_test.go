package migrations

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetLedgerLockTimeout shortens the lock wait of the checksum backfill for a
// test; the returned func restores it.
func SetLedgerLockTimeout(d time.Duration) func() {
	old := ledgerLockTimeout
	ledgerLockTimeout = d
	return func() { ledgerLockTimeout = old }
}

// ApplyThrough applies the embedded migrations numbered up to version to the
// empty database at ownerURL, so a test can put rows in before a later
// migration runs (Up applies the rest).
func ApplyThrough(ctx context.Context, ownerURL string, version int) error {
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, ledgerTable); err != nil {
		return err
	}
	all, err := All()
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.Version > version {
			break
		}
		if err := apply(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}
