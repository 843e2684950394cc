package workspacedata_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// fill gives the tenant rows in as many tables as its credentials reach:
// resources of every kind, a webhook subscription, a second key, an
// Idempotency-Key record, and the events and jobs those writes queue.
func fill(t *testing.T, env *apitest.Env, tn *apitest.Tenant, hook string) {
	t.Helper()
	prj := tn.TaskProject(t)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "task of " + tn.WorkspaceID})["id"].(string)
	tn.Do(t, "POST", apitest.TaskBase+"update", map[string]any{"id": task, "title": "renamed"})
	tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "risk"})
	note := tn.Do(t, "POST", apitest.NoteBase+"create", map[string]any{"projectId": prj, "body": "notes"})
	if note.Status != 201 {
		t.Fatalf("note: %d %s", note.Status, note.Raw)
	}
	tn.CreateActionItem(t, map[string]any{"projectId": prj, "title": "act"})
	rca := tn.CreateRRCA(t, map[string]any{"title": "leak", "projectId": prj})
	root := tn.AddNode(t, rca, "PROBLEM", "the press leaks", "")
	tn.AddNode(t, rca, "WHY", "a seal wore out", root)
	tn.Subscribe(t, hook, "*")
	tn.NewKey(t)
	r := env.Do(t, apitest.Request{Method: "POST", Path: apitest.ProjectBase + "create",
		Body:   map[string]any{"name": "idempotent"},
		Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "Idempotency-Key": "once"}})
	if r.Status != 201 {
		t.Fatalf("idempotent create: %d %s", r.Status, r.Raw)
	}
}

// newEnv is an app of the test's own whose webhook subscriptions may name the
// loopback receiver it returns the URL of (no other host resolves here).
func newEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	rcv := apitest.NewReceiver(t)
	return apitest.Reaching(t, rcv, true), rcv.URL
}

// rowTables are every table with a workspace_id column, read from the
// catalog by the test itself.
func rowTables(t *testing.T) []string {
	t.Helper()
	rows, err := testdb.OwnerPool(t).Query(context.Background(), `select c.relname from pg_class c
		where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition
		  and exists (select 1 from pg_attribute a
			where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 20 {
		t.Fatalf("only %d tables with workspace_id: %v", len(names), names)
	}
	return names
}

// counts are the workspace's rows per table (workspaces by id), counted by
// the superuser, past row-level security; tables without any are left out.
func counts(t *testing.T, ws string) map[string]int {
	t.Helper()
	conn := testdb.Conn(t, testdb.Database(t).AdminURL)
	ctx := context.Background()
	out := map[string]int{}
	for _, table := range append(rowTables(t), "workspaces") {
		col := "workspace_id"
		if table == "workspaces" {
			col = "id"
		}
		var n int
		err := conn.QueryRow(ctx, "select count(*) from "+pgx.Identifier{table}.Sanitize()+" where "+col+" = $1",
			ws).Scan(&n)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
