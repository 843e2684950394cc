package workspacedata_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

func uuidOf(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func erase(t *testing.T, env *apitest.Env, ws string) *apitest.Response {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/admin/v1/workspaces/" + ws, Header: env.Admin()})
	if r.Status != 202 {
		t.Fatalf("erase: %d %s", r.Status, r.Raw)
	}
	return r
}

// eraseToTheEnd runs the erasure once more, as the job's next attempt would,
// and checks that it finished: no row of the workspace in any table, and the
// workspace itself gone from the admin API.
func eraseToTheEnd(t *testing.T, env *apitest.Env, ws string, id uuid.UUID) {
	t.Helper()
	if err := workspacedata.Erase(context.Background(), env.Directory, id); err != nil {
		t.Fatal(err)
	}
	if left := counts(t, ws); len(left) != 0 {
		t.Errorf("rows left after the last run: %v", left)
	}
	apitest.WantError(t, getWorkspace(t, env, ws), 404, "NOT_FOUND")
}

func getWorkspace(t *testing.T, env *apitest.Env, ws string) *apitest.Response {
	t.Helper()
	return env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + ws, Header: env.Admin()})
}

// jobsOf counts the workspace's River jobs on every node, but its erasure's.
func jobsOf(t *testing.T, ws string) int {
	t.Helper()
	return testdb.RiverCount(t, `select count(*) from river.river_job
		where args ->> 'workspaceId' = $1 and kind <> 'workspace.erase'`, ws)
}

// TestEraseLeavesNoRow: after the erasure no table with a workspace_id column
// (from the catalog) holds a row of the workspace, nor River a job of it, and
// the workspace is 404; another workspace keeps every row, and its key works.
func TestEraseLeavesNoRow(t *testing.T) {
	t.Parallel()
	env, hook := newEnv(t)
	a, b := env.NewTenant(t), env.NewTenant(t)
	fill(t, env, a, hook)
	fill(t, env, b, hook)
	before := counts(t, b.WorkspaceID)
	if jobsOf(t, a.WorkspaceID) == 0 {
		t.Fatal("the fixture queued no job of the workspace")
	}

	r := erase(t, env, a.WorkspaceID)
	if r.Str("status") != "SUSPENDED" || r.Data()["erasure"] == nil {
		t.Errorf("erase answered %s", r.Raw)
	}
	// The key and the console session are refused at once, before any job ran.
	apitest.WantError(t, a.Get(t, apitest.ProjectBase+"list", nil), 401, "INVALID_TOKEN")
	if r := a.Console(t, "GET", "/openapi/v1/apps", nil); r.Status != 401 {
		t.Errorf("console session after erase: %d %s", r.Status, r.Raw)
	}
	if got := getWorkspace(t, env, a.WorkspaceID); got.Str("erasure.state") != workspacedata.StateQueued {
		t.Errorf("GET while queued: %s", got.Raw)
	}
	// Asking again changes nothing and queues no second job.
	erase(t, env, a.WorkspaceID)
	if n := testdb.RiverCount(t, `select count(*) from river.river_job where kind = 'workspace.erase'
		and args ->> 'workspaceId' = $1`, a.WorkspaceID); n != 1 {
		t.Errorf("%d erasure jobs, want 1", n)
	}

	if err := workspacedata.Erase(context.Background(), env.Directory, uuidOf(t, a.WorkspaceID)); err != nil {
		t.Fatal(err)
	}
	if left := counts(t, a.WorkspaceID); len(left) != 0 {
		t.Errorf("rows of the erased workspace left: %v", left)
	}
	if n := jobsOf(t, a.WorkspaceID); n != 0 {
		t.Errorf("%d River jobs of the erased workspace left", n)
	}
	apitest.WantError(t, getWorkspace(t, env, a.WorkspaceID), 404, "NOT_FOUND")
	apitest.WantError(t, env.Do(t, apitest.Request{Method: "DELETE", Path: "/admin/v1/workspaces/" + a.WorkspaceID,
		Header: env.Admin()}), 404, "NOT_FOUND")

	after := counts(t, b.WorkspaceID)
	for _, table := range sortedKeys(before) {
		if after[table] != before[table] {
			t.Errorf("the other workspace's %s: %d rows, had %d", table, after[table], before[table])
		}
	}
	if r := b.Get(t, apitest.ProjectBase+"list", nil); r.Status != 200 {
		t.Errorf("the other workspace's key: %d %s", r.Status, r.Raw)
	}
}

// TestEraseResumesAfterStop: a run stopped between two tables, as by a
// killed worker, leaves its progress in GET; the next run finishes.
func TestEraseResumesAfterStop(t *testing.T) {
	t.Parallel()
	env, hook := newEnv(t)
	tn := env.NewTenant(t)
	fill(t, env, tn, hook)
	id := uuidOf(t, tn.WorkspaceID)
	erase(t, env, tn.WorkspaceID)
	ctx := context.Background()
	if err := workspacedata.EraseStoppingAfter(ctx, env.Directory, id, 3); !errors.Is(err, workspacedata.ErrStopped) {
		t.Fatalf("stopped run: %v", err)
	}
	r := getWorkspace(t, env, tn.WorkspaceID)
	e, _ := r.Data()["erasure"].(map[string]any)
	if e["state"] != workspacedata.StateRunning || e["tablesDone"] != float64(3) ||
		e["tablesTotal"] != float64(len(testdb.TenantTables(t))) {
		t.Errorf("progress after 3 tables of %d: %s", len(testdb.TenantTables(t)), r.Raw)
	}
	if left := counts(t, tn.WorkspaceID); len(left) == 0 {
		t.Error("the stopped run left nothing; the restart is not tested")
	}
	eraseToTheEnd(t, env, tn.WorkspaceID, id)
}

// TestEraseJob: the River worker the job clients register erases the
// workspace. Not parallel: workers take every job of the package's database.
func TestEraseJob(t *testing.T) {
	env, hook := newEnv(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	fill(t, env, tn, hook)
	erase(t, env, tn.WorkspaceID)
	apitest.Eventually(t, apitest.JobWait, "the workspace is gone", func() bool {
		return getWorkspace(t, env, tn.WorkspaceID).Status == 404
	})
	if left := counts(t, tn.WorkspaceID); len(left) != 0 {
		t.Errorf("rows left: %v", left)
	}
	if n := jobsOf(t, tn.WorkspaceID); n != 0 {
		t.Errorf("%d River jobs of the erased workspace left", n)
	}
}

// TestEraseSweepsRowsWrittenBehind: a row written after its table was emptied
// (by a request already under way when the credentials went) is found by the
// last look and deleted before the workspace is.
func TestEraseSweepsRowsWrittenBehind(t *testing.T) {
	t.Parallel()
	env, hook := newEnv(t)
	tn := env.NewTenant(t)
	fill(t, env, tn, hook)
	id := uuidOf(t, tn.WorkspaceID)
	erase(t, env, tn.WorkspaceID)
	ctx := context.Background()
	all := len(testdb.TenantTables(t))
	if err := workspacedata.EraseStoppingAfter(ctx, env.Directory, id, all); !errors.Is(err, workspacedata.ErrStopped) {
		t.Fatalf("stopped run: %v", err)
	}
	err := testdb.InWorkspace(t, testdb.AppPool(t), tn.WorkspaceID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "insert into projects (workspace_id, id, name) values ($1, $2, 'late')",
			id, uuid.Must(uuid.NewV7()))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if left := counts(t, tn.WorkspaceID); left["projects"] != 1 {
		t.Fatalf("before the last run: %v", left)
	}
	eraseToTheEnd(t, env, tn.WorkspaceID, id)
}

// TestEraseShowsARunThatFailed: a run of the job that fails leaves its error
// in GET (RETRYING) until a later run gets further.
func TestEraseShowsARunThatFailed(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	id := uuidOf(t, tn.WorkspaceID)
	erase(t, env, tn.WorkspaceID)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	w := &workspacedata.EraseWorker{Directory: env.Directory}
	job := &river.Job[workspacedata.EraseArgs]{Args: workspacedata.EraseArgs{WorkspaceID: id}}
	if err := w.Work(stopped, job); err == nil {
		t.Fatal("a run with its context cancelled succeeded")
	}
	r := getWorkspace(t, env, tn.WorkspaceID)
	if r.Str("erasure.state") != workspacedata.StateRetrying || r.Str("erasure.lastError") == "" {
		t.Errorf("after a failed run: %s", r.Raw)
	}
	if err := w.Work(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, getWorkspace(t, env, tn.WorkspaceID), 404, "NOT_FOUND")
}
