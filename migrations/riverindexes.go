package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverGIN are River's GIN indexes over every job's args and metadata. River
// itself never searches them (unique jobs hash their args into unique_key);
// they serve JobList's Metadata filter and searches in the River UI, which
// pmapi does not need. Every job row version enters both, and a webhook takes a
// job per writing transaction, each inserted, fetched and completed: dropping
// them cut River's insert to about half its time (docs/performance.md).
// River's reindexer is told to leave them out (jobs.NewClients).
var riverGIN = []struct{ name, column string }{
	{"river_job_args_index", "args"},
	{"river_job_metadata_index", "metadata"},
}

// RiverIndexesDropped names the River indexes pmapi drops.
func RiverIndexesDropped() []string {
	out := make([]string, len(riverGIN))
	for i, ix := range riverGIN {
		out[i] = ix.name
	}
	return out
}

// migrateRiver runs River's migrations and then drops its GIN indexes. Before
// River migrations that have not run yet, the indexes are made again, so that
// a River release whose migration changes or drops them finds them as it left
// them.
func migrateRiver(ctx context.Context, conn *pgx.Conn, migrator *rivermigrate.Migrator[pgx.Tx]) error {
	existing, err := migrator.ExistingVersions(ctx)
	if err != nil {
		return err
	}
	if len(existing) > 0 && len(existing) < len(migrator.AllVersions()) {
		for _, ix := range riverGIN {
			create := fmt.Sprintf("create index if not exists %s on %s.river_job using gin (%s)",
				ix.name, RiverSchema, ix.column)
			if _, err := conn.Exec(ctx, create); err != nil {
				return err
			}
		}
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	for _, ix := range riverGIN {
		if _, err := conn.Exec(ctx, fmt.Sprintf("drop index if exists %s.%s", RiverSchema, ix.name)); err != nil {
			return err
		}
	}
	return nil
}
