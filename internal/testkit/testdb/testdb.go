// Package testdb gives each test package its own PostgreSQL database, cloned from
// a template that was migrated once per server, so packages run in parallel and
// start in milliseconds instead of migrating.
//
// The server comes from pgcluster: PMAPI_DATABASE_URL when set (`make test` starts
// one private cluster and sets it for every package), otherwise a private cluster
// for this package alone.
//
// When that server is a Citus coordinator (`make test-citus`), the template is
// migrated through the coordinator (migrations distribute the schema there),
// every database is made and dropped on every node, and the server role fails
// any statement that reaches more than one shard.
package testdb

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

var (
	current  pgcluster.Database
	ready    bool
	adminURL string
	template string
	onCitus  bool

	poolsMu sync.Mutex
	appPool *pgxpool.Pool
	ownPool *pgxpool.Pool
	closers []func()
)

// Run is the whole body of a package's TestMain: os.Exit(testdb.Run(m)).
func Run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	srv, err := pgcluster.FromEnv(ctx, pgcluster.Options{Log: os.Stderr})
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "testdb:", err)
		return 1
	}
	db, err := setup(ctx, srv.AdminURL)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb:", err)
		_ = srv.Stop(context.Background())
		return 1
	}
	current, ready, adminURL = db, true, srv.AdminURL
	if onCitus && os.Getenv("PMAPI_TENANT_SETTING") == "" {
		// What a deployment on Citus sets; the pmapi processes and in-process
		// configurations of the tests read it as theirs do.
		os.Setenv("PMAPI_TENANT_SETTING", tenant.SetLocal.String())
	}
	code := m.Run()

	poolsMu.Lock()
	closing := closers
	poolsMu.Unlock()
	for i := len(closing) - 1; i >= 0; i-- {
		closing[i]()
	}
	poolsMu.Lock()
	for _, p := range []*pgxpool.Pool{appPool, ownPool} {
		if p != nil {
			p.Close()
		}
	}
	poolsMu.Unlock()
	if err := pgcluster.DropDatabase(context.Background(), srv.AdminURL, db.Name); err != nil {
		fmt.Fprintln(os.Stderr, "testdb: drop:", err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "testdb: stop:", err)
	}
	return code
}

func setup(ctx context.Context, adminURL string) (pgcluster.Database, error) {
	top, err := pgcluster.Discover(ctx, adminURL)
	if err != nil {
		return pgcluster.Database{}, err
	}
	onCitus = top.Citus
	if err := pgcluster.EnsureRoles(ctx, adminURL); err != nil {
		return pgcluster.Database{}, err
	}
	if template, err = ensureTemplate(ctx, adminURL); err != nil {
		return pgcluster.Database{}, err
	}
	return clone(ctx, adminURL, fmt.Sprintf("pmapi_t_%s_%d_%d", packageName(), os.Getpid(), time.Now().UnixNano()%1e6))
}

func clone(ctx context.Context, adminURL, name string) (db pgcluster.Database, err error) {
	// Two packages cloning the same template at the same instant can collide on
	// its lock; a short retry absorbs that.
	for attempt := 0; ; attempt++ {
		db, err = pgcluster.CreateDatabase(ctx, adminURL, name, template)
		if err == nil || attempt == 20 || !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return db, err
	}
	return db, pgcluster.GuardMultiShard(ctx, adminURL, name)
}

// ensureTemplate migrates a template database once per schema fingerprint, under a
// lock shared by every package of the run.
func ensureTemplate(ctx context.Context, adminURL string) (string, error) {
	name := "pmapi_tpl_" + migrations.Fingerprint()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "select pg_advisory_lock(727275)"); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock(727275)")
	exists, err := pgcluster.DatabaseExists(ctx, adminURL, name)
	if err != nil || exists {
		return name, err
	}
	// On Citus a migration's DDL can meet another package's own migrations
	// (the migrations and pgcluster tests build their databases) in the
	// catalogs every database shares, and fail with "tuple concurrently
	// updated"; building the template again from scratch gets past it.
	for attempt := 1; ; attempt++ {
		err = buildTemplate(ctx, adminURL, name)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "tuple concurrently updated") {
			return name, err
		}
	}
}

// buildTemplate migrates a fresh database and freezes it as the template name.
func buildTemplate(ctx context.Context, adminURL, name string) error {
	building := name + "_wip"
	if err := pgcluster.DropDatabase(ctx, adminURL, building); err != nil {
		return err
	}
	db, err := pgcluster.CreateDatabase(ctx, adminURL, building, "")
	if err != nil {
		return err
	}
	ownerURL, err := url.Parse(db.OwnerURL)
	if err != nil {
		return err
	}
	if onCitus {
		// Two shards a worker still put any statement that misses its
		// workspace on several shards, and the template and its clones stay
		// small and quick to copy (Citus's default is 32 per table).
		q := ownerURL.Query()
		q.Set("citus.shard_count", strconv.Itoa(citusShardCount))
		ownerURL.RawQuery = q.Encode()
	}
	if err := migrations.Up(ctx, ownerURL.String()); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	// Clones copy the template's catalog, these marks with it.
	if err := pgcluster.MarkSearchLeakproof(ctx, adminURL, building); err != nil {
		return err
	}
	return pgcluster.FreezeAsTemplate(ctx, adminURL, building, name)
}

// citusShardCount is the shards per distributed table of the test template.
const citusShardCount = 4

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

func packageName() string {
	base := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	base = nonIdent.ReplaceAllString(strings.ToLower(base), "_")
	if len(base) > 20 {
		base = base[:20]
	}
	return base
}

// ExtraDatabase clones one more migrated database for the test, dropped when it
// ends: a second shard, for tests of the shard map.
func ExtraDatabase(tb testing.TB) pgcluster.Database {
	tb.Helper()
	Database(tb)
	ctx := context.Background()
	name := fmt.Sprintf("pmapi_x_%s_%d_%d", packageName(), os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := clone(ctx, adminURL, name)
	if err != nil {
		tb.Fatalf("testdb: extra database: %v", err)
	}
	tb.Cleanup(func() {
		if err := pgcluster.DropDatabase(context.Background(), adminURL, name); err != nil {
			tb.Errorf("testdb: drop %s: %v", name, err)
		}
	})
	return db
}

// TenantSetting is how a test binds a transaction to a workspace on the package's
// database, as the server would: PMAPI_TENANT_SETTING when set, else SetLocal on
// Citus (set_config stays on the coordinator, so the workers' row-level security
// would see no workspace) and SetConfig on plain PostgreSQL. On Citus, Run sets
// PMAPI_TENANT_SETTING=set_local for the package when it is unset, so pmapi
// processes a test starts get the same mode.
func TenantSetting(tb testing.TB) tenant.SettingMode {
	tb.Helper()
	Database(tb)
	if v := os.Getenv("PMAPI_TENANT_SETTING"); v != "" {
		mode, err := tenant.ParseSettingMode(v)
		if err != nil {
			tb.Fatal(err)
		}
		return mode
	}
	if onCitus {
		return tenant.SetLocal
	}
	return tenant.SetConfig
}

// SettingModes are the modes a test can bind workspaces in on the package's
// database: both on plain PostgreSQL, SetLocal alone on Citus, where set_config
// never reaches the workers.
func SettingModes(tb testing.TB) []tenant.SettingMode {
	tb.Helper()
	Database(tb)
	if onCitus {
		return []tenant.SettingMode{tenant.SetLocal}
	}
	return []tenant.SettingMode{tenant.SetConfig, tenant.SetLocal}
}

// BindWorkspace binds tx to workspace as TenantSetting says, for tests that
// query as the server role themselves. workspace is any text, so a test can
// also bind an empty or malformed one.
func BindWorkspace(tb testing.TB, tx pgx.Tx, workspace string) error {
	tb.Helper()
	ctx := context.Background()
	if TenantSetting(tb) == tenant.SetLocal {
		_, err := tx.Exec(ctx, "set local pmapi.workspace_id = '"+strings.ReplaceAll(workspace, "'", "''")+"'")
		return err
	}
	_, err := tx.Exec(ctx, "select set_config('pmapi.workspace_id', $1, true)", workspace)
	return err
}

// InWorkspace runs fn in a transaction of db (a pool, a connection) bound to
// workspace (BindWorkspace), committed when fn succeeds and rolled back
// otherwise: a test's own reads and writes under row-level security.
func InWorkspace(tb testing.TB, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, workspace string, fn func(pgx.Tx) error) error {
	tb.Helper()
	return pgx.BeginFunc(context.Background(), db, func(tx pgx.Tx) error {
		if err := BindWorkspace(tb, tx, workspace); err != nil {
			return err
		}
		return fn(tx)
	})
}

// AllowMultiShard lifts the multi-shard guard for the rest of tx, for a test's
// own probe that spans every shard on purpose (row-level security must hide
// every other workspace's rows on every worker): the guard is there to catch
// the server's statements. It does nothing on plain PostgreSQL.
func AllowMultiShard(tb testing.TB, tx pgx.Tx) error {
	tb.Helper()
	Database(tb)
	if !onCitus {
		return nil
	}
	_, err := tx.Exec(context.Background(), "set local citus.multi_task_query_log_level = off")
	return err
}

// OnCitus tells whether the package's database is on a Citus cluster, for
// a test whose expectation differs there only in degree.
func OnCitus(tb testing.TB) bool {
	tb.Helper()
	Database(tb)
	return onCitus
}

// SkipOnCitus skips a test that cannot mean the same on a Citus cluster; why
// says what it depends on. Keep these few: the point of the Citus run is that
// the suite passes there.
func SkipOnCitus(tb testing.TB, why string) {
	tb.Helper()
	Database(tb)
	if onCitus {
		tb.Skip("not on Citus: " + why)
	}
}

// BeforeClose runs f once the package's tests are done, before its pools
// close and its database is dropped: the end of a fixture the package's tests
// share (apitest.Shared), whose connections would otherwise keep the pools
// from closing.
func BeforeClose(f func()) {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	closers = append(closers, f)
}

// AdminURL is the superuser URL of the server the package's database is on.
func AdminURL(tb testing.TB) string {
	tb.Helper()
	Database(tb)
	return adminURL
}

// Database returns this package's database; it fails the test outside Run.
func Database(tb testing.TB) pgcluster.Database {
	tb.Helper()
	if !ready {
		tb.Fatal("testdb: call testdb.Run from TestMain")
	}
	return current
}

var serverShard struct {
	once  sync.Once
	shard *tenant.Shard
	err   error
}

// ServerShard is the package's database as the server reaches it: "default"
// over AppPool in TenantSetting's mode, and on Citus routed, so each
// workspace's transactions run on the node that holds it (tenant.Shard.Route).
// It is the package's one routed shard, kept until its tests are done.
func ServerShard(tb testing.TB) *tenant.Shard {
	tb.Helper()
	pool := AppPool(tb)
	serverShard.once.Do(func() {
		s := tenant.NewShard("default", pool, TenantSetting(tb))
		if onCitus {
			if serverShard.err = s.Route(context.Background(), RouteOptions()); serverShard.err != nil {
				return
			}
			BeforeClose(s.StopRouting)
		}
		serverShard.shard = s
	})
	if serverShard.err != nil {
		tb.Fatalf("testdb: route the package's shard: %v", serverShard.err)
	}
	return serverShard.shard
}

// RouteOptions are the tests' routing options: PMAPI_CITUS_PLAN_CACHE's
// choice of plans (auto when unset), as the server reads it.
func RouteOptions() tenant.RouteOptions {
	p, err := tenant.ParsePlanCache(os.Getenv("PMAPI_CITUS_PLAN_CACHE"))
	if err != nil {
		p = tenant.PlanCacheAuto
	}
	return tenant.RouteOptions{PlanCache: p}
}

// AppPool connects as the server's role, which row-level security binds.
func AppPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return pool(tb, &appPool, Database(tb).AppURL)
}

// OwnerPool connects as the owner role, for schema inspection in tests.
func OwnerPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return pool(tb, &ownPool, Database(tb).OwnerURL)
}

func pool(tb testing.TB, slot **pgxpool.Pool, url string) *pgxpool.Pool {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	if *slot == nil {
		p, err := tenant.Connect(context.Background(), url)
		if err != nil {
			tb.Fatalf("testdb: %v", err)
		}
		*slot = p
	}
	return *slot
}

// WaitingTests raises -test.parallel, GOMAXPROCS by default, to n unless the
// command line sets it, for a TestMain before Run: a package whose parallel
// tests spend most of their time waiting on PostgreSQL, timers and other
// processes runs more of them at once than the machine has cores.
func WaitingTests(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
