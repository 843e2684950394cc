package tenant_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// twoShards is a directory over the package database ("default") and a second
// migrated database ("east").
func twoShards(t *testing.T) (*tenant.Directory, *pgxpool.Pool) {
	t.Helper()
	extra := testdb.ExtraDatabase(t)
	east := testdb.Pool(t, extra.AppURL)
	shards, err := tenant.NewShards("default",
		tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t)),
		tenant.NewShard("east", east, testdb.TenantSetting(t)))
	if err != nil {
		t.Fatal(err)
	}
	return tenant.NewDirectory(shards), east
}

func TestResolveFollowsPlacement(t *testing.T) {
	ctx := context.Background()
	dir, eastPool := twoShards(t)
	w := testdb.Workspace(t, dir, "placed on east", "east")
	res, err := dir.Resolve(ctx, w.ConsoleClientID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Shard.Name != "east" || !res.Console || res.Workspace.ID != w.ID {
		t.Fatalf("resolved to shard %s console=%v workspace %s", res.Shard.Name, res.Console, res.Workspace.ID)
	}
	if _, err := authz.CreateUser(ctx, res.Shard, w.ID, "e@example.com", "East"); err != nil {
		t.Fatal(err)
	}
	// The row is in the east database, not in the default one.
	if n := countUsers(t, eastPool, w); n != 1 {
		t.Errorf("east shard holds %d users of the workspace, want 1", n)
	}
	if n := countUsers(t, testdb.AppPool(t), w); n != 0 {
		t.Errorf("default shard holds %d users of an east workspace", n)
	}
}

func countUsers(t *testing.T, pool *pgxpool.Pool, w tenant.Workspace) int {
	t.Helper()
	var n int
	err := tenant.NewShard("probe", pool, testdb.TenantSetting(t)).Tx(context.Background(), w.ID, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "select count(*) from users where workspace_id = $1", w.ID).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPlaceRefusesAWorkspaceWithData(t *testing.T) {
	ctx := context.Background()
	dir, _ := twoShards(t)
	empty := testdb.Workspace(t, dir, "empty", "")
	moved, err := dir.Place(ctx, empty.ID, "east", authz.HasUsers)
	if err != nil || moved.Shard != "east" {
		t.Fatalf("placing an empty workspace: %v, shard %s", err, moved.Shard)
	}
	full := testdb.Workspace(t, dir, "full", "")
	shard, _ := dir.ShardOf(full)
	if _, err := authz.CreateUser(ctx, shard, full.ID, "f@example.com", "F"); err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Place(ctx, full.ID, "east", authz.HasUsers); pmapi.ErrorCode(err) != pmapi.CodeConflict {
		t.Fatalf("placing a workspace with users: %v, want CONFLICT", err)
	}
}

func TestResolveRejectsMalformedAndUnknownIDs(t *testing.T) {
	dir, _ := twoShards(t)
	for _, id := range []string{"", "pm_cli_short", "pm_cli_0000000000000000000!", "pm_cli_00000000000000000000"} {
		if _, err := dir.Resolve(context.Background(), id); pmapi.ErrorCode(err) != pmapi.CodeNotFound {
			t.Errorf("Resolve(%q) = %v, want NOT_FOUND", id, err)
		}
	}
}
