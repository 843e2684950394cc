package testdb

import (
	"testing"

	"github.com/pmapi/pmapi/tenant"
)

// Directory is the tenant directory a single-shard server has over the
// package's database: one shard, "default", bound as TenantSetting says. Tests
// of the directory, the workers and authentication start from it.
func Directory(tb testing.TB) (*tenant.Directory, *tenant.Shard) {
	tb.Helper()
	shard := tenant.NewShard("default", AppPool(tb), TenantSetting(tb))
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return tenant.NewDirectory(shards), shard
}
