package migrations_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestTenantForeignKeysTakeNoSetActions: Citus refuses a foreign key that sets
// NULL or a default on delete or update when the distribution column is part
// of it, which is every key between tables that both carry workspace_id. Such
// keys are NO ACTION, RESTRICT or CASCADE; a store that deletes the target
// clears the references first.
func TestTenantForeignKeysTakeNoSetActions(t *testing.T) {
	var bad []string
	rows, err := testdb.OwnerPool(t).Query(context.Background(), setActionKeysSQL)
	if err != nil {
		t.Fatal(err)
	}
	if bad, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("foreign key %s sets NULL or a default; make it NO ACTION and clear the references in the store", b)
	}
}

// setActionKeysSQL lists the offending keys as "table.constraint".
const setActionKeysSQL = `select c.conrelid::regclass::text || '.' || c.conname from pg_constraint c
	where c.contype = 'f' and (c.confdeltype in ('n', 'd') or c.confupdtype in ('n', 'd'))
	  and exists (select 1 from pg_attribute a
	    where a.attrelid = c.conrelid and a.attname = 'workspace_id' and not a.attisdropped)
	  and exists (select 1 from pg_attribute a
	    where a.attrelid = c.confrelid and a.attname = 'workspace_id' and not a.attisdropped)
	order by 1`

// TestSetActionKeysAreFound proves the query above finds such a key: it makes
// one in a scratch database and expects to hear of it.
func TestSetActionKeysAreFound(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	conn := testdb.Conn(t, db.OwnerURL)
	if _, err := conn.Exec(ctx, `create table probe_a (workspace_id uuid, id uuid, primary key (workspace_id, id));
		create table probe_b (workspace_id uuid, id uuid, a_id uuid, primary key (workspace_id, id),
			foreign key (workspace_id, a_id) references probe_a (workspace_id, id) on delete set null (a_id))`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, setActionKeysSQL)
	if err != nil {
		t.Fatal(err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0] != "probe_b.probe_b_workspace_id_a_id_fkey" {
		t.Errorf("found %v; want the probe's set-null key alone", found)
	}
}
