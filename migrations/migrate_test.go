package migrations_test

import (
	"context"
	"testing"

	"github.com/pmapi/pmapi/internal/testdb"
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
