package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

func TestUpIsIdempotentAndStatusIsComplete(t *testing.T) {
	ctx := context.Background()
	db := testdb.Database(t)
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatalf("second Up on a migrated database: %v", err)
	}
	lines, err := migrations.Status(ctx, db.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]int{}
	for _, l := range lines {
		sources[l.Source]++
		if !l.Applied {
			t.Errorf("%s %d %s not applied", l.Source, l.Version, l.Name)
		}
	}
	if sources["pmapi"] == 0 || sources["river"] == 0 {
		t.Errorf("status lists %v; want both pmapi and river migrations", sources)
	}
	if err := migrations.CheckCurrent(ctx, testdb.AppPool(t)); err != nil {
		t.Errorf("CheckCurrent as the server role: %v", err)
	}
}

func TestMigrationFilesAreOrdered(t *testing.T) {
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range all {
		if m.Version != i+1 {
			t.Errorf("migration %d is numbered %d; numbers must be 1, 2, 3, ... without gaps", i+1, m.Version)
		}
	}
}

// TestCheckCurrentRefusesAnUnmigratedDatabase is what /readyz rests on: a
// database missing pmapi's or River's newest migration is not ready, and the
// error names what is missing.
func TestCheckCurrentRefusesAnUnmigratedDatabase(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	owner := testdb.Pool(t, db.OwnerURL)
	app := testdb.Pool(t, db.AppURL)
	if err := migrations.CheckCurrent(ctx, app); err != nil {
		t.Fatalf("a migrated database: %v", err)
	}
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	latest := all[len(all)-1]
	if _, err := owner.Exec(ctx, "delete from schema_migrations where version = $1", latest.Version); err != nil {
		t.Fatal(err)
	}
	if err := migrations.CheckCurrent(ctx, app); err == nil || !strings.Contains(err.Error(), latest.Name) {
		t.Errorf("without pmapi's newest migration: %v", err)
	}
	restore := "insert into schema_migrations (version, name) values ($1, $2)"
	if _, err := owner.Exec(ctx, restore, latest.Version, latest.Name); err != nil {
		t.Fatal(err)
	}
	_, err = owner.Exec(ctx, "delete from river.river_migration "+
		"where version = (select max(version) from river.river_migration)")
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations.CheckCurrent(ctx, app); err == nil || !strings.Contains(err.Error(), "river migration") {
		t.Errorf("without River's newest migration: %v", err)
	}
	// An unreachable database is not ready either.
	app.Close()
	if err := migrations.CheckCurrent(ctx, app); err == nil {
		t.Error("a closed pool is ready")
	}
}
