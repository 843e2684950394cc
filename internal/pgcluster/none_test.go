package pgcluster

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingAvailableIsOneClearError takes every way to a server away (no
// URL, no binaries on PATH or under the Debian directory, an unreachable
// Docker engine) and expects the one error that says what to install.
func TestNothingAvailableIsOneClearError(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(empty, "docker.sock"))
	old := binariesGlob
	binariesGlob = filepath.Join(empty, "*", "bin")
	t.Cleanup(func() { binariesGlob = old })

	srv, err := Start(context.Background(), Options{})
	if !errors.Is(err, ErrNoPostgres) || srv != nil {
		t.Fatalf("got %v, %v; want ErrNoPostgres", srv, err)
	}
	for _, says := range []string{"PMAPI_DATABASE_URL", "apt-get install postgresql", "Docker"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("the error does not mention %q: %v", says, err)
		}
	}
}
