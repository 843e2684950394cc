package usage_test

import (
	"os"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }
