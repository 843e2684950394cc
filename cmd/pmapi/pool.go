package main

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/tenant"
)

// connect opens one shard's pool (tenant.PoolConfig's settings) with room for
// at least floor connections (zero: pgx's default size), unless the URL sets
// pool_max_conns itself: an operator who capped the pool, say for PostgreSQL's
// max_connections or a pooler in front of it, keeps the cap.
func connect(ctx context.Context, url string, floor int32) (*pgxpool.Pool, error) {
	cfg, err := tenant.PoolConfig(url)
	if err != nil {
		return nil, err
	}
	atLeast(cfg, url, floor)
	return pgxpool.NewWithConfig(ctx, cfg)
}

// atLeast raises cfg's MaxConns to floor unless url sets pool_max_conns.
func atLeast(cfg *pgxpool.Config, url string, floor int32) {
	if cfg.MaxConns < floor && !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = floor
	}
}
