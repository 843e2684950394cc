package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestMain(m *testing.M) {
	// The tests that run pmapi as processes mostly wait on them (a worker's
	// rescue, a drain, a delivery).
	testdb.WaitingTests(8)
	code := testdb.Run(m)
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// pmapiBinary is the package's one build of pmapi, for the tests that run it
// as processes: linking it takes seconds, once is enough.
func pmapiBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "pmapi-test-bin-"); binErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "pmapi"), ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "pmapi")
}
