package rig

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/migrations"
)

// Database is pmapi's migrated database on srv.
type Database struct {
	Server *pgcluster.Server
	pgcluster.Database
	Version string // server_version
}

// Provision makes pmapi's roles and a database named prefix plus a stamp on
// srv (on every node of a Citus cluster) and migrates it; shards > 0 sets
// citus.shard_count for the migrations. On failure it drops what it made and
// leaves srv running.
func Provision(ctx context.Context, srv *pgcluster.Server, prefix string, shards int) (*Database, error) {
	d := &Database{Server: srv}
	if err := pgcluster.EnsureRoles(ctx, srv.AdminURL); err != nil {
		return nil, err
	}
	var err error
	name := prefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	if d.Database, err = pgcluster.CreateDatabase(ctx, srv.AdminURL, name, ""); err != nil {
		return nil, err
	}
	ownerURL := d.OwnerURL
	if shards > 0 {
		u, err := url.Parse(ownerURL)
		if err != nil {
			d.drop()
			return nil, err
		}
		q := u.Query()
		q.Set("citus.shard_count", strconv.Itoa(shards))
		u.RawQuery = q.Encode()
		ownerURL = u.String()
	}
	if err := migrations.Up(ctx, ownerURL); err != nil {
		d.drop()
		return nil, err
	}
	if err := pgcluster.MarkSearchLeakproof(ctx, srv.AdminURL, d.Name); err != nil {
		d.drop()
		return nil, err
	}
	if conn, err := pgx.Connect(ctx, srv.AdminURL); err == nil {
		_ = conn.QueryRow(ctx, "show server_version").Scan(&d.Version)
		conn.Close(ctx)
	}
	return d, nil
}

func (d *Database) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = pgcluster.DropDatabase(ctx, d.Server.AdminURL, d.Name)
}

// Close drops the database and stops its server (which does nothing to a
// server given by URL).
func (d *Database) Close() {
	d.drop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = d.Server.Stop(ctx)
}
