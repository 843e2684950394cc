package pmapisdk_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsDir is the TypeScript SDK's package; make test installs its pinned npm
// packages into tsDir/node_modules (npm ci, when its lock file changes).
const tsDir = "ts"

// tsBin is the path of an npm tool of the TypeScript SDK. Without node or
// the installed packages the test skips, unless PMAPI_TS_SDK=require (what
// make test and make sdk set), where that is a failure.
func tsBin(t *testing.T, tool string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(tsDir, "node_modules", ".bin", tool))
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("PMAPI_TS_SDK") == "require" {
			t.Fatalf("the TypeScript SDK's tools are not there (node on PATH, npm ci in sdk/ts; make test does it): %v",
				err)
		}
		t.Skipf("node or sdk/ts's packages are missing (cd sdk/ts && npm ci); make test installs and runs them: %v", err)
	}
	return bin
}

// runTS runs a node tool in dir and fails t with its output when it fails;
// files become the tool's descriptors from 3 on.
func runTS(t *testing.T, dir string, env []string, files []*os.File, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = files
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}
