package apitest

import (
	"os"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// Main is the whole body of the TestMain of a package whose tests drive the
// app: its tests run over a database of the package's own (testdb.Run), and
// as they wait on it far more than they compute, eight of its parallel tests
// run at once (testdb.WaitingTests) unless the command line says otherwise.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit, for a TestMain that checks more once the
// tests have passed; it answers the tests' exit code.
func Run(m *testing.M) int {
	testdb.WaitingTests(8)
	return testdb.Run(m)
}
