package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed sql/*.sql
var files embed.FS

// RiverSchema keeps River's tables apart from pmapi's, so grants on them are one
// schema-wide statement.
const RiverSchema = "river"

// lockKey serialises concurrent `migrate up` runs (several pods starting at once).
const lockKey = 7272740001

// Migration is one embedded SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// All returns the embedded migrations in order.
func All() ([]Migration, error) {
	entries, err := fs.ReadDir(files, "sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		num, rest, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(rest, ".sql") {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql", e.Name())
		}
		b, err := files.ReadFile("sql/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(rest, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations numbered %d", out[i].Version)
		}
	}
	return out, nil
}

// Fingerprint identifies the schema the embedded files produce; tests name their
// migrated template database after it so a changed migration gets a new template.
func Fingerprint() string {
	all, err := All()
	if err != nil {
		return "invalid"
	}
	h := sha256.New()
	// What Up does besides the files: River's tables on every Citus node.
	fmt.Fprintln(h, "river on every node, job ids by node group")
	for _, m := range all {
		fmt.Fprintf(h, "%d %s\n%s\n", m.Version, m.Name, m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Up applies every pending migration, River's, and the grants, connecting with
// ownerURL. It is safe to run concurrently and repeatedly.
func Up(ctx context.Context, ownerURL string) error { return UpWith(ctx, ownerURL, UpOptions{}) }

// UpOptions shape UpWith.
type UpOptions struct {
	// NodeAddrs say where this process reaches a Citus node (host:port), by
	// host:port as pg_dist_node names it, when not there.
	NodeAddrs map[string]string
}

// UpWith is Up with options. On Citus it also makes River's tables on every
// worker (RiverOnNodes).
func UpWith(ctx context.Context, ownerURL string, opts UpOptions) error {
	pool, err := pgxpool.New(ctx, ownerURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect as owner: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", int64(lockKey)); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", int64(lockKey))

	if _, err := conn.Exec(ctx, ledgerTable); err != nil {
		return err
	}
	all, err := All()
	if err != nil {
		return err
	}
	if err := addChecksums(ctx, conn.Conn(), all); err != nil {
		return err
	}
	applied, err := readLedger(ctx, conn.Conn())
	if err != nil {
		return err
	}
	if err := verifyApplied(all, applied); err != nil {
		return err
	}
	for _, m := range all {
		if _, done := applied[m.Version]; done {
			continue
		}
		if err := apply(ctx, conn.Conn(), m); err != nil {
			return err
		}
	}
	if err := placeOnCitus(ctx, conn.Conn()); err != nil {
		return err
	}
	citus, err := HasCitus(ctx, conn)
	if err != nil {
		return err
	}
	if err := riverOn(ctx, ownerURL, citus, 0); err != nil {
		return err
	}
	if !citus {
		return nil
	}
	return riverOnWorkers(ctx, conn.Conn(), ownerURL, opts.NodeAddrs)
}

// ledgerTable is the ledger of applied migrations.
const ledgerTable = `create table if not exists schema_migrations (
	version integer primary key,
	name text not null,
	applied_at timestamptz not null default now(),
	checksum text)`

// riverGrants lets the server's role run River (insert jobs in its own
// transactions, work and complete them) without owning River's tables.
// riverOn runs them on every node.
var riverGrants = strings.NewReplacer("$schema", RiverSchema).Replace(`
grant usage on schema $schema to pmapi_app;
grant select, insert, update, delete on all tables in schema $schema to pmapi_app;
grant usage, select, update on all sequences in schema $schema to pmapi_app;
grant execute on all functions in schema $schema to pmapi_app;
`)

func apply(ctx context.Context, conn *pgx.Conn, m Migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
	}
	_, err = tx.Exec(ctx, "insert into schema_migrations (version, name, checksum) values ($1, $2, $3)",
		m.Version, m.Name, m.Checksum())
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// StatusLine is one migration and whether it has been applied.
type StatusLine struct {
	Source    string // "pmapi" or "river"
	Version   int
	Name      string
	Applied   bool
	AppliedAt time.Time // zero when the source does not record it (River)
	// Checksum is the SHA-256 recorded when it was applied; empty for River's
	// and for a ledger that the first `migrate up` with checksums has not
	// filled in yet.
	Checksum string
	// Changed: the embedded file is not what was applied (`migrate up` refuses
	// to run until it is restored).
	Changed bool
}

// Status lists pmapi's and River's migrations with their state. It works with
// either role's URL.
func Status(ctx context.Context, dbURL string) ([]StatusLine, error) {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	applied := map[int]ledgerRow{}
	var exists bool
	if err := conn.QueryRow(ctx, "select to_regclass('schema_migrations') is not null").Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		if applied, err = readLedger(ctx, conn.Conn()); err != nil {
			return nil, err
		}
	}
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []StatusLine
	for _, m := range all {
		line := StatusLine{Source: "pmapi", Version: m.Version, Name: m.Name}
		if r, ok := applied[m.Version]; ok {
			line.Applied, line.AppliedAt, line.Checksum = true, r.AppliedAt, r.Checksum
			// An unfilled checksum is not a change: the next `migrate up`
			// records the file's.
			line.Changed = r.Name != m.Name || (r.Checksum != "" && !m.matches(r.Checksum))
		}
		out = append(out, line)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: RiverSchema})
	if err != nil {
		return nil, err
	}
	riverApplied := map[int]bool{}
	// Before River's first migration its version table does not exist; that
	// simply means none is applied.
	if existing, err := migrator.ExistingVersions(ctx); err == nil {
		for _, m := range existing {
			riverApplied[m.Version] = true
		}
	}
	for _, m := range migrator.AllVersions() {
		line := StatusLine{Source: "river", Version: m.Version, Name: m.Name, Applied: riverApplied[m.Version]}
		out = append(out, line)
	}
	return out, nil
}

// Pending reports whether any migration is not yet applied; /readyz uses it.
func Pending(ctx context.Context, dbURL string) (bool, error) {
	lines, err := Status(ctx, dbURL)
	if err != nil {
		return true, err
	}
	for _, l := range lines {
		if !l.Applied {
			return true, nil
		}
	}
	return false, nil
}

// querier is the slice of pgx a readiness check needs.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// CheckCurrent returns an error unless the newest embedded migration, pmapi's
// and River's, has been applied to the database behind q. It is one cheap
// query, for /readyz.
func CheckCurrent(ctx context.Context, q querier) error {
	all, err := All()
	if err != nil {
		return err
	}
	latest := all[len(all)-1]
	riverLatest, err := latestRiverVersion()
	if err != nil {
		return err
	}
	var ok, riverOK bool
	err = q.QueryRow(ctx, `select exists(select 1 from schema_migrations where version = $1),
		exists(select 1 from `+RiverSchema+`.river_migration where line = 'main' and version = $2)`,
		latest.Version, riverLatest).Scan(&ok, &riverOK)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("migration %04d_%s is not applied; run pmapi migrate up", latest.Version, latest.Name)
	}
	if !riverOK {
		return fmt.Errorf("river migration %d is not applied; run pmapi migrate up", riverLatest)
	}
	return nil
}

// latestRiverVersion is the newest migration of River's main line that this
// build embeds (no database is touched; worked out once).
var latestRiverVersion = sync.OnceValues(func() (int, error) {
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), &rivermigrate.Config{Schema: RiverSchema})
	if err != nil {
		return 0, err
	}
	versions := migrator.AllVersions()
	if len(versions) == 0 {
		return 0, fmt.Errorf("river embeds no migrations")
	}
	return versions[len(versions)-1].Version, nil
})
