package workspacedata_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }
