package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// TestReadyChecksEveryShard is /readyz's check over two shards: ready while
// both are reachable and migrated; not ready, naming the shard, when the second
// lacks its newest migration or cannot be reached.
func TestReadyChecksEveryShard(t *testing.T) {
	ctx := context.Background()
	extra := testdb.ExtraDatabase(t)
	second := testdb.Pool(t, extra.AppURL)
	shardsWith := func(p *pgxpool.Pool) *server {
		t.Helper()
		sh, err := tenant.NewShards(
			"default",
			tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t)),
			tenant.NewShard("eu2", p, testdb.TenantSetting(t)),
		)
		if err != nil {
			t.Fatal(err)
		}
		return &server{shards: sh}
	}
	if err := shardsWith(second).ready(ctx); err != nil {
		t.Fatalf("two migrated shards: %v", err)
	}
	owner := testdb.Pool(t, extra.OwnerURL)
	forgetNewest := "delete from schema_migrations where version = (select max(version) from schema_migrations)"
	if _, err := owner.Exec(ctx, forgetNewest); err != nil {
		t.Fatal(err)
	}
	if err := shardsWith(second).ready(ctx); err == nil || !strings.Contains(err.Error(), "shard eu2") {
		t.Errorf("second shard unmigrated: %v", err)
	}
	down := testdb.Pool(t, "postgres://pmapi_app@127.0.0.1:1/none?connect_timeout=2")
	if err := shardsWith(down).ready(ctx); err == nil || !strings.Contains(err.Error(), "shard eu2") {
		t.Errorf("second shard unreachable: %v", err)
	}
}
