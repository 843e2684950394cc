package apitest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// EventRow is one recorded event with the number of fan-out jobs that name it.
type EventRow struct {
	Type string
	Data map[string]any
	Jobs int
}

// Events returns the tenant's events, oldest first, each with how many River
// fan-out jobs name it: every event of a committed change is in exactly one.
// Events and jobs are read apart: on Citus the events are on a worker and
// River's jobs on the coordinator, and one statement cannot join the two.
func (tn *Tenant) Events(t testing.TB) []EventRow {
	t.Helper()
	ctx := context.Background()
	ws := uuid.MustParse(tn.WorkspaceID)
	var out []EventRow
	err := serverShard(t).Tx(ctx, ws, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select id, type, data from events where workspace_id = $1 order by id`, ws)
		if err != nil {
			return err
		}
		var ids []uuid.UUID
		for rows.Next() {
			var r EventRow
			var id uuid.UUID
			var data []byte
			if err := rows.Scan(&id, &r.Type, &data); err != nil {
				return err
			}
			if err := json.Unmarshal(data, &r.Data); err != nil {
				return err
			}
			ids, out = append(ids, id), append(out, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// One pass over the fan-out jobs, counting the jobs that name each
		// event: the package's jobs pile up (no worker runs them), so a
		// look-up per event would read them all once per event.
		rows, err = tx.Query(ctx, `select e.id::uuid, count(distinct j.id)::int
			from river.river_job j cross join lateral jsonb_array_elements_text(j.args->'eventIds') as e (id)
			where j.kind = 'event.fanout' and e.id::uuid = any($1::uuid[]) group by e.id`, ids)
		if err != nil {
			return err
		}
		jobs := map[uuid.UUID]int{}
		for rows.Next() {
			var id uuid.UUID
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			jobs[id] = n
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i, id := range ids {
			out[i].Jobs = jobs[id]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// EventsOf returns the tenant's events of one type.
func (tn *Tenant) EventsOf(t testing.TB, typ string) []EventRow {
	t.Helper()
	var out []EventRow
	for _, e := range tn.Events(t) {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// ExecAsServer runs one statement as the server's role inside the tenant's
// workspace, for tests of what the database itself allows. The statement may
// span every shard: it probes the database's rules, it is not the server's.
func (tn *Tenant) ExecAsServer(t testing.TB, sql string) error {
	t.Helper()
	ctx := context.Background()
	return serverShard(t).Tx(ctx, uuid.MustParse(tn.WorkspaceID), func(tx pgx.Tx) error {
		if err := testdb.AllowMultiShard(t, tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sql)
		return err
	})
}

// serverShard binds transactions as the server does on the package's database.
func serverShard(t testing.TB) *tenant.Shard { return testdb.ServerShard(t) }
