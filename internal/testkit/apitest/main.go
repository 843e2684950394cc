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
func Main(m *testing.M) {
	testdb.WaitingTests(8)
	os.Exit(testdb.Run(m))
}
