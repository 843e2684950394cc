package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

const (
	workspaceA = "0190a5e4-0000-7000-8000-00000000000a"
	workspaceB = "0190a5e4-0000-7000-8000-00000000000b"
)

// TestCitusClusterKeepsEachStatementOnOneShard launches the three-node cluster
// as `make test-citus` and `pmapi dev --citus` do, and walks what they rely on:
// the workers found from the coordinator's URL alone, a database made on every
// node, a table distributed by the owner role and read by the server role
// through SET LOCAL on the workers, the multi-shard guard, a clone of a frozen
// template, and a restart on new ports that still reaches the data.
func TestCitusClusterKeepsEachStatementOnOneShard(t *testing.T) {
	if err := CitusAvailable(); err != nil {
		t.Skip("Citus is not installed here; this test and make test-citus need it:", err)
	}
	ctx := context.Background()
	dir := serverReadableTempDir(t)
	srv, err := Start(ctx, Options{Citus: true, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop(ctx)
		}
	}()
	if srv.Source != "citus" {
		t.Errorf("source %q, want citus", srv.Source)
	}
	top, err := Discover(ctx, srv.AdminURL)
	if err != nil || !top.Citus || len(top.Workers) != 2 {
		t.Fatalf("discovered %+v, %v; want Citus with two workers", top, err)
	}
	if n := queryInt(t, srv.AdminURL, "select count(*) from pg_dist_node where isactive"); n != 3 {
		t.Errorf("pg_dist_node of postgres lists %d active nodes, want the coordinator and two workers", n)
	}
	if err := EnsureRoles(ctx, srv.AdminURL); err != nil {
		t.Fatal(err)
	}
	for _, w := range top.Workers {
		if n := queryInt(t, w, "select count(*) from pg_roles where rolname in ('pmapi_owner', 'pmapi_app')"); n != 2 {
			t.Errorf("worker %s has %d of pmapi's roles", w[strings.Index(w, "@"):], n)
		}
	}

	db, err := CreateDatabase(ctx, srv.AdminURL, "harness", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range top.Workers {
		u, _ := onDatabase(w, "harness")
		if n := queryInt(t, u, "select count(*) from pg_extension where extname = 'citus'"); n != 1 {
			t.Errorf("worker database without the citus extension")
		}
	}
	runSQL(t, db.OwnerURL, `
		create table notes (workspace_id uuid not null, id int not null, body text not null, primary key (workspace_id, id));
		alter table notes enable row level security;
		create policy tenant_isolation on notes
			using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);
		grant select, insert, update, delete on notes to pmapi_app;
		select create_distributed_table('notes', 'workspace_id', shard_count => 4);
		insert into notes values ('`+workspaceA+`', 1, 'a1'), ('`+workspaceA+`', 2, 'a2'), ('`+workspaceB+`', 1, 'b1');`)
	n := queryInt(t, db.OwnerURL,
		"select count(distinct nodeport) from citus_shards where table_name = 'notes'::regclass")
	if n != 2 {
		t.Errorf("shards of notes are on %d nodes, want both workers", n)
	}
	if err := GuardMultiShard(ctx, srv.AdminURL, "harness"); err != nil {
		t.Fatal(err)
	}
	checkServerRole(t, db.AppURL)
	// Splitting a shard copies it through a subscription from one worker to
	// another, which needs the passwords in the workers' own pg_dist_authinfo.
	runSQL(t, db.OwnerURL, "select isolate_tenant_to_new_shard('notes', '"+workspaceA+"', 'CASCADE')")
	checkServerRole(t, db.AppURL)

	// A clone of the frozen database is the same cluster again: the metadata
	// names the same nodes, the workers hold the same shard names.
	if err := FreezeAsTemplate(ctx, srv.AdminURL, "harness", "harness_tpl"); err != nil {
		t.Fatal(err)
	}
	clone, err := CreateDatabase(ctx, srv.AdminURL, "harness_clone", "harness_tpl")
	if err != nil {
		t.Fatal(err)
	}
	if err := GuardMultiShard(ctx, srv.AdminURL, "harness_clone"); err != nil {
		t.Fatal(err)
	}
	checkServerRole(t, clone.AppURL)

	for _, name := range []string{"harness_clone", "harness_tpl"} {
		if err := DropDatabase(ctx, srv.AdminURL, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range top.Nodes() {
		if left := queryInt(t, n, "select count(*) from pg_database where datname like 'harness%'"); left != 0 {
			t.Errorf("%d harness databases left on a node after the drops", left)
		}
	}

	// A persistent cluster comes back on new ports with new role passwords; the
	// start and SyncNodes point the metadata at them.
	kept, err := CreateDatabase(ctx, srv.AdminURL, "kept", "")
	if err != nil {
		t.Fatal(err)
	}
	runSQL(t, kept.OwnerURL, `create table notes (workspace_id uuid not null, body text not null);
		grant select on notes to pmapi_app;
		select create_distributed_table('notes', 'workspace_id', shard_count => 4);
		insert into notes values ('`+workspaceA+`', 'still here')`)
	stopped = true
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Start(ctx, Options{Citus: true, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop(ctx)
	if again.AdminURL == srv.AdminURL {
		t.Log("the restart found the same ports free again; the new-port path is not exercised this time")
	}
	if err := EnsureRoles(ctx, again.AdminURL); err != nil {
		t.Fatal(err)
	}
	if err := SyncNodes(ctx, again.AdminURL, "kept"); err != nil {
		t.Fatal(err)
	}
	kept, _ = Describe(again.AdminURL, "kept")
	var body string
	err = pgx.BeginFunc(ctx, connect(t, kept.AppURL), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "set local pmapi.workspace_id = '"+workspaceA+"'"); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "select body from notes where workspace_id = $1", workspaceA).Scan(&body)
	})
	if err != nil || body != "still here" {
		t.Fatalf("after the restart: %q, %v", body, err)
	}
}

// checkServerRole reads notes as the server role: SET LOCAL reaches the
// workers' row-level security, set_config does not, and a statement that
// would reach every shard fails.
func checkServerRole(t *testing.T, appURL string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, appURL)
	read := func(setting string) ([]string, error) {
		var out []string
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, setting); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "select body from notes where workspace_id = $1 order by id", workspaceA)
			if err != nil {
				return err
			}
			out, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		return out, err
	}
	got, err := read("set local pmapi.workspace_id = '" + workspaceA + "'")
	if err != nil || strings.Join(got, ",") != "a1,a2" {
		t.Errorf("workspace A's notes with SET LOCAL: %v, %v; want a1,a2", got, err)
	}
	got, err = read("set local pmapi.workspace_id = '" + workspaceB + "'")
	if err != nil || len(got) != 0 {
		t.Errorf("workspace A's notes bound to workspace B: %v, %v; want none", got, err)
	}
	got, err = read("select set_config('pmapi.workspace_id', '" + workspaceA + "', true)")
	if err != nil || len(got) != 0 {
		t.Errorf("set_config reached the workers (%v, %v); the SetLocal mode would be needless", got, err)
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "set local pmapi.workspace_id = '"+workspaceA+"'"); err != nil {
			return err
		}
		var n int
		return tx.QueryRow(ctx, "select count(*) from notes").Scan(&n)
	})
	if err == nil || !strings.Contains(err.Error(), "multi-task query about to be executed") {
		t.Errorf("a statement over every shard as the server role: %v, want the multi-shard guard's error", err)
	}
}

func TestCitusMissingSaysWhatToInstall(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "99", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	err := citusInstalled(bin)
	if !errors.Is(err, ErrNoCitus) {
		t.Fatalf("binaries without Citus: %v, want ErrNoCitus", err)
	}
	for _, says := range []string{"../shared/citus/install.sh", "postgresql-15-citus"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("the error does not mention %q: %v", says, err)
		}
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryInt(t *testing.T, url, sql string) int {
	t.Helper()
	var n int
	if err := connect(t, url).QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
