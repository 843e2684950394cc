package apitest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testdb"
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
func (tn *Tenant) Events(t testing.TB) []EventRow {
	t.Helper()
	ctx := context.Background()
	ws := uuid.MustParse(tn.WorkspaceID)
	var out []EventRow
	err := serverShard(t).Tx(ctx, ws, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select e.type, e.data,
				(select count(*) from river.river_job j where j.kind = 'event.fanout' and j.args->'eventIds' @> jsonb_build_array(e.id))
			from events e where e.workspace_id = $1 order by e.id`, ws)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r EventRow
			var data []byte
			if err := rows.Scan(&r.Type, &data, &r.Jobs); err != nil {
				return err
			}
			if err := json.Unmarshal(data, &r.Data); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
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
// workspace, for tests of what the database itself allows.
func (tn *Tenant) ExecAsServer(t testing.TB, sql string) error {
	t.Helper()
	ctx := context.Background()
	return serverShard(t).Tx(ctx, uuid.MustParse(tn.WorkspaceID), func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql)
		return err
	})
}

// serverShard binds transactions as the server does on the package's database.
func serverShard(t testing.TB) *tenant.Shard {
	return tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
}
