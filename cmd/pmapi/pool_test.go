package main

import (
	"context"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// TestWorkPoolHasRoomForItsWorkers starts `work` as main does: its pool holds a
// connection for every worker and River's own (pgx's default of four had twenty
// workers queueing), while an operator's pool_max_conns stays as set and an
// API-only process keeps pgx's default.
func TestWorkPoolHasRoomForItsWorkers(t *testing.T) {
	ctx := context.Background()
	url := testdb.Database(t).AppURL
	t.Setenv("PMAPI_DATABASE_URL", url)
	t.Setenv("PMAPI_SECRET_KEY", seal.Random())
	t.Setenv("PMAPI_METRICS_ADDR", "off")
	t.Setenv("PMAPI_JOB_WORKERS", "30")
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	maxConns := func(cfg config, withWork bool) int32 {
		t.Helper()
		s, err := startServer(ctx, cfg, false, withWork)
		if err != nil {
			t.Fatal(err)
		}
		defer s.stop()
		return s.shards.Default.Pool.Config().MaxConns
	}
	if got, want := maxConns(cfg, true), jobs.PoolConns(30); got != want || want <= 30 {
		t.Errorf("work with 30 workers: pool of %d, want %d", got, want)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	capped := cfg
	capped.DatabaseURL = url + sep + "pool_max_conns=7"
	if got := maxConns(capped, true); got != 7 {
		t.Errorf("work with pool_max_conns=7: pool of %d", got)
	}
	shards, err := openShards(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shards.Close()
	if got := shards.Default.Pool.Config().MaxConns; got >= jobs.PoolConns(30) {
		t.Errorf("without workers: pool of %d, want pgx's default", got)
	}
}
