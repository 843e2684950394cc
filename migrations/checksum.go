package migrations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// FileName is the embedded file the migration came from.
func (m Migration) FileName() string { return fmt.Sprintf("%04d_%s.sql", m.Version, m.Name) }

// Checksum is the SHA-256 of the file's bytes, recorded when the migration is
// applied so that a later edit of an applied file is noticed instead of
// silently never reaching the databases that ran the old text.
func (m Migration) Checksum() string {
	sum := sha256.Sum256([]byte(m.SQL))
	return hex.EncodeToString(sum[:])
}

// ledgerRow is one applied migration as schema_migrations records it.
// Checksum is empty for rows recorded before checksums existed.
type ledgerRow struct {
	Name      string
	AppliedAt time.Time
	Checksum  string
}

// ledgerLockTimeout bounds the wait for schema_migrations' exclusive lock.
var ledgerLockTimeout = 5 * time.Second

// readLedger reads schema_migrations whether or not it has the checksum column
// yet: to_jsonb of the row has the key only when the column exists, so
// `migrate status` works on a database no new `migrate up` has touched.
func readLedger(ctx context.Context, conn *pgx.Conn) (map[int]ledgerRow, error) {
	rows, err := conn.Query(
		ctx,
		"select version, name, applied_at, coalesce(to_jsonb(m)->>'checksum', '') from schema_migrations m",
	)
	if err != nil {
		return nil, err
	}
	out := map[int]ledgerRow{}
	for rows.Next() {
		var v int
		var r ledgerRow
		if err := rows.Scan(&v, &r.Name, &r.AppliedAt, &r.Checksum); err != nil {
			return nil, err
		}
		out[v] = r
	}
	return out, rows.Err()
}

// addChecksums gives a ledger from before checksums its column and fills in
// every missing checksum from the embedded files, trusting that they are the
// text that was applied (nothing else is left to compare with). The ALTER takes
// an exclusive lock on schema_migrations, which every /readyz reads; waiting
// behind a long transaction would queue those reads and fail readiness
// everywhere, so the lock is given up after ledgerLockTimeout and the step
// retried, and the run fails after three tries.
func addChecksums(ctx context.Context, conn *pgx.Conn, all []Migration) error {
	var has bool
	err := conn.QueryRow(ctx, `select exists (select 1 from pg_attribute
		where attrelid = 'schema_migrations'::regclass and attname = 'checksum' and not attisdropped)`).Scan(&has)
	if err != nil {
		return err
	}
	if has {
		var missing bool
		err = conn.QueryRow(ctx, "select exists (select 1 from schema_migrations where checksum is null)").Scan(&missing)
		if err != nil || !missing {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if has {
				return backfill(ctx, tx, all)
			}
			// SET takes no parameters; the value is a number formatted here.
			setTimeout := fmt.Sprintf("set local lock_timeout = '%dms'", ledgerLockTimeout.Milliseconds())
			if _, err := tx.Exec(ctx, setTimeout); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "alter table schema_migrations add column if not exists checksum text"); err != nil {
				return err
			}
			return backfill(ctx, tx, all)
		})
		var pgErr *pgconn.PgError
		if err == nil || attempt == 3 || !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("add checksums to schema_migrations: %w", err)
	}
	return nil
}

// backfill records the file's checksum on every applied row without one whose
// name matches; a row whose name does not is left for verifyApplied to report.
func backfill(ctx context.Context, tx pgx.Tx, all []Migration) error {
	const record = "update schema_migrations set checksum = $3 where version = $1 and name = $2 and checksum is null"
	for _, m := range all {
		if _, err := tx.Exec(ctx, record, m.Version, m.Name, m.Checksum()); err != nil {
			return err
		}
	}
	return nil
}

// ChangedError says that an applied migration's file is not what was applied.
type ChangedError struct {
	File     string // the embedded file, e.g. 0003_apps_keys.sql
	Recorded string // what schema_migrations holds: name and checksum
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("migration %s was changed after it was applied (the database recorded %s): "+
		"restore the file as it was and put the change in a new migration", e.File, e.Recorded)
}

// verifyApplied returns a ChangedError for the first applied migration whose
// embedded file differs from what the ledger recorded (its name or its bytes).
// A version the files no longer have is left alone: an older binary may run
// against a database a newer one migrated, as during a rolling upgrade.
func verifyApplied(all []Migration, ledger map[int]ledgerRow) error {
	for _, m := range all {
		r, ok := ledger[m.Version]
		if !ok {
			continue
		}
		if r.Name != m.Name || !m.matches(r.Checksum) {
			return &ChangedError{
				File:     m.FileName(),
				Recorded: fmt.Sprintf("%04d_%s.sql, sha256 %s", m.Version, r.Name, orNone(r.Checksum)),
			}
		}
	}
	return nil
}

// matches tells whether a recorded checksum is the file's, or one it had
// before its comments alone were reworded.
func (m Migration) matches(recorded string) bool {
	return recorded == m.Checksum() || slices.Contains(rewordedComments[m.FileName()], recorded)
}

// rewordedComments are the checksums applied files had before a change to
// their comments alone (no statement changed): a database that ran the
// earlier text ran the same statements, so its ledger still matches.
var rewordedComments = map[string][]string{
	"0014_search_index.sql":          {"391840364eb307d3293b07977eb712e5220b6979bbac23fd4417f1a820da20e5"},
	"0015_task_search.sql":           {"66ed7e95cd3dc4d5f7e0d015480c2a5590af4ec0318bb7a9ae88f344373c6a52"},
	"0016_outbox_keeps_its_heap.sql": {"1edd5e2f0c7ee07ac71ad83c321955c4e9047a04739c19b359e7f3aad4fca6ea"},
	"0017_attempt_log.sql":           {"be4dc290a7fbe80a9a44c4bd177de6137d3564b6355620f1750a03d572fd9d91"},
}

func orNone(s string) string {
	if s == "" {
		return "no checksum"
	}
	return s
}
