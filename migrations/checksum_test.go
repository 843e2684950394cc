package migrations_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

func recordedChecksums(t *testing.T, p *pgxpool.Pool) map[int]string {
	t.Helper()
	rows, err := p.Query(context.Background(), "select version, coalesce(checksum, '') from schema_migrations")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			t.Fatal(err)
		}
		out[v] = sum
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppliedMigrationsRecordTheirFilesChecksum(t *testing.T) {
	db := testdb.ExtraDatabase(t)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	got := recordedChecksums(t, testdb.Pool(t, db.OwnerURL))
	for _, m := range all {
		if got[m.Version] != m.Checksum() {
			t.Errorf("%s: recorded %q, file %s", m.FileName(), got[m.Version], m.Checksum())
		}
	}
	lines, err := migrations.Status(context.Background(), db.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Source == "pmapi" && (l.Checksum == "" || l.Changed) {
			t.Errorf("status of %d %s: checksum %q, changed %v", l.Version, l.Name, l.Checksum, l.Changed)
		}
	}
}

// TestUpRefusesAnAppliedMigrationThatChanged stands a changed file in by
// changing what the ledger recorded for it (the files are embedded): Up must
// refuse before applying anything and name the file; status must show it.
func TestUpRefusesAnAppliedMigrationThatChanged(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	owner := testdb.Pool(t, db.OwnerURL)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	edited := all[2]
	mismatch := "update schema_migrations set checksum = repeat('0', 64) where version = $1"
	if _, err := owner.Exec(ctx, mismatch, edited.Version); err != nil {
		t.Fatal(err)
	}
	// The newest migration is pending too: a refused run must not apply it.
	latest := all[len(all)-1]
	if _, err := owner.Exec(ctx, "delete from schema_migrations where version = $1", latest.Version); err != nil {
		t.Fatal(err)
	}
	err = migrations.Up(ctx, db.OwnerURL)
	var changed *migrations.ChangedError
	if !errors.As(err, &changed) || changed.File != edited.FileName() ||
		!strings.Contains(err.Error(), edited.FileName()) {
		t.Fatalf("Up with %s changed: %v; want a ChangedError naming the file", edited.FileName(), err)
	}
	if _, ok := recordedChecksums(t, owner)[latest.Version]; ok {
		t.Errorf("the refused run applied %s", latest.FileName())
	}
	lines, err := migrations.Status(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Source != "pmapi" {
			continue
		}
		if want := l.Version == edited.Version; l.Changed != want {
			t.Errorf("status of %d %s: changed %v, want %v", l.Version, l.Name, l.Changed, want)
		}
	}
	// A renamed file is a change as well.
	rename := "update schema_migrations set checksum = $2, name = 'renamed' where version = $1"
	if _, err := owner.Exec(ctx, rename, edited.Version, edited.Checksum()); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db.OwnerURL); !errors.As(err, &changed) || !strings.Contains(err.Error(), "renamed") {
		t.Errorf("Up with %s recorded under another name: %v", edited.FileName(), err)
	}
}

// TestUpAcceptsAFileWhoseCommentsAloneWereReworded: a database that applied
// 0016 before its comment was reworded recorded the earlier text's checksum;
// the statements are the same, so Up goes on and status shows no change.
func TestUpAcceptsAFileWhoseCommentsAloneWereReworded(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	owner := testdb.Pool(t, db.OwnerURL)
	const earlier = "1edd5e2f0c7ee07ac71ad83c321955c4e9047a04739c19b359e7f3aad4fca6ea"
	if _, err := owner.Exec(ctx, "update schema_migrations set checksum = $1 where version = 16", earlier); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatalf("Up over the earlier wording of 0016: %v", err)
	}
	lines, err := migrations.Status(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Source == "pmapi" && l.Changed {
			t.Errorf("status of %d %s: changed", l.Version, l.Name)
		}
	}
}

// TestUpAddsChecksumsToAnOlderLedger: a database migrated before checksums
// existed has no column; status still reads it, and the next Up adds the
// column and fills it in from the files.
func TestUpAddsChecksumsToAnOlderLedger(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	owner := testdb.Pool(t, db.OwnerURL)
	if _, err := owner.Exec(ctx, "alter table schema_migrations drop column checksum"); err != nil {
		t.Fatal(err)
	}
	lines, err := migrations.Status(ctx, db.OwnerURL)
	if err != nil {
		t.Fatalf("status of a ledger without checksums: %v", err)
	}
	for _, l := range lines {
		if l.Source == "pmapi" && (!l.Applied || l.Checksum != "" || l.Changed) {
			t.Errorf("status of %d %s before the backfill: %+v", l.Version, l.Name, l)
		}
	}
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatalf("Up on a ledger without checksums: %v", err)
	}
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	got := recordedChecksums(t, owner)
	for _, m := range all {
		if got[m.Version] != m.Checksum() {
			t.Errorf("%s after the backfill: %q, want %s", m.FileName(), got[m.Version], m.Checksum())
		}
	}
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Errorf("Up after the backfill: %v", err)
	}
}

// TestChecksumBackfillGivesUpOnABlockedLock: the column is added under a lock
// that every /readyz query waits behind, so a long transaction holding the
// ledger must make Up fail after its lock timeout instead of queueing forever.
func TestChecksumBackfillGivesUpOnABlockedLock(t *testing.T) {
	defer migrations.SetLedgerLockTimeout(100 * time.Millisecond)()
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	owner := testdb.Pool(t, db.OwnerURL)
	if _, err := owner.Exec(ctx, "alter table schema_migrations drop column checksum"); err != nil {
		t.Fatal(err)
	}
	holder, err := owner.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, "lock table schema_migrations in access share mode"); err != nil {
		t.Fatal(err)
	}
	err = migrations.Up(ctx, db.OwnerURL)
	if err == nil || !strings.Contains(err.Error(), "lock timeout") {
		t.Fatalf("Up while a transaction holds the ledger: %v; want a lock timeout", err)
	}
	_ = holder.Rollback(ctx)
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatalf("Up once the ledger is free: %v", err)
	}
	var n int
	if err := owner.QueryRow(ctx, "select count(*) from schema_migrations where checksum is null").Scan(&n); err != nil ||
		n != 0 {
		t.Errorf("%d rows without a checksum (%v)", n, err)
	}
}
