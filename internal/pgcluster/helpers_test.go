package pgcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// serverBinaries returns the machine's PostgreSQL server binaries, or skips a
// test that needs them to start a server of its own.
func serverBinaries(t *testing.T) string {
	t.Helper()
	bin, err := findBinaries()
	if err != nil {
		t.Skip("no PostgreSQL server binaries on this machine:", err)
	}
	return bin
}

// serverReadableTempDir is a fresh directory the server's user can enter
// (t.TempDir's parents are private to root, and the server runs as postgres).
func serverReadableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "pmapi")
}
