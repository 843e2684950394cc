package tenant

import (
	"bufio"
	"context"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PoolConfig parses a database URL into the pool configuration every pmapi
// process uses. Callers may adjust it (size, dialer) before Connect.
// Every connection moves uuids in binary (registerUUID) and reads through a
// larger buffer (bufferedFrontend).
func PoolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.BuildFrontend = bufferedFrontend
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUID(conn.TypeMap())
		return nil
	}
	return cfg, nil
}

// readBufferSize is what one read(2) from PostgreSQL may bring. pgx reads
// into 8 KiB, so a list page (12 to 25 KB on the wire for 50 tasks) took
// two or three reads; behind this buffer it takes one when the page has
// arrived, for a copy of it (docs/decisions/reads.md). A pool of 20
// connections holds 1.25 MiB of them.
const readBufferSize = 64 << 10

// bufferedFrontend is pgx's protocol reader on a larger read buffer.
func bufferedFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBufferSize), w)
}

// Connect opens a pool with PoolConfig's settings.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(url)
	if err != nil {
		return nil, err
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}
