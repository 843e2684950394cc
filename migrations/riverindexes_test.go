package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

func riverIndexes(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(
		context.Background(),
		"select indexname from pg_indexes where schemaname = $1 and tablename = 'river_job'",
		migrations.RiverSchema,
	)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestRiversGINIndexesAreDropped: after Up, River's job table has its fetch,
// kind, state and unique indexes but not the GIN indexes over args and
// metadata, also when Up ran River migrations that were pending (one is taken
// back here), before which it puts them back for River to find.
func TestRiversGINIndexesAreDropped(t *testing.T) {
	ctx := context.Background()
	db := testdb.Database(t)
	pool := testdb.OwnerPool(t)
	check := func(when string) {
		t.Helper()
		names := riverIndexes(t, pool)
		for _, gone := range migrations.RiverIndexesDropped() {
			if slices.Contains(names, gone) {
				t.Errorf("%s: %s is still there", when, gone)
			}
		}
		for _, kept := range []string{
			"river_job_pkey", "river_job_kind", "river_job_prioritized_fetching_index", "river_job_unique_idx",
		} {
			if !slices.Contains(names, kept) {
				t.Errorf("%s: %s is gone", when, kept)
			}
		}
	}
	check("after Up")
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: migrations.RiverSchema})
	if err != nil {
		t.Fatal(err)
	}
	all := migrator.AllVersions()
	oneBack := &rivermigrate.MigrateOpts{TargetVersion: all[len(all)-2].Version}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionDown, oneBack); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatalf("Up with a River migration pending: %v", err)
	}
	check("after Up ran a pending River migration")
	if existing, err := migrator.ExistingVersions(ctx); err != nil || len(existing) != len(all) {
		t.Errorf("River at %d of %d migrations (%v)", len(existing), len(all), err)
	}
}
