package migrations

import "time"

// SetLedgerLockTimeout shortens the lock wait of the checksum backfill for a
// test; the returned func restores it.
func SetLedgerLockTimeout(d time.Duration) func() {
	old := ledgerLockTimeout
	ledgerLockTimeout = d
	return func() { ledgerLockTimeout = old }
}
