package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

var target = audit.Target{Type: "key", ID: "key_01J9Z3Q8W5N6K2M4R7T8V9X0YZ"}

// record appends one entry as a user of workspace ws, in a transaction of
// its own, and fails t on an error.
func record(t *testing.T, ws uuid.UUID, action string) {
	t.Helper()
	_, shard := testdb.Directory(t)
	ctx := audit.WithOrigin(context.Background(), audit.Origin{
		Actor: audit.Actor{Type: audit.ActorUser, ID: "u1"}, IP: "192.0.2.1", RequestID: "req-12345678",
	})
	if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error { return audit.Record(ctx, tx, ws, action, target) }); err != nil {
		t.Fatalf("record: %v", err)
	}
}

func list(t *testing.T, ws uuid.UUID, f audit.Filter) []audit.Entry {
	t.Helper()
	_, shard := testdb.Directory(t)
	if f.Limit == 0 {
		f.Limit = 100
	}
	got, err := audit.List(context.Background(), shard, ws, f)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return got
}

func TestRecordKeepsWhoWhatAndWhere(t *testing.T) {
	t.Parallel()
	dir, _ := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	record(t, ws, audit.KeyRevoked)
	got := list(t, ws, audit.Filter{})
	if len(got) != 1 {
		t.Fatalf("%d entries, want 1", len(got))
	}
	e := got[0]
	if e.Actor != (audit.Actor{Type: audit.ActorUser, ID: "u1"}) || e.Action != audit.KeyRevoked || e.Target != target ||
		e.IP == nil || *e.IP != "192.0.2.1" || e.RequestID == nil || *e.RequestID != "req-12345678" || e.At.IsZero() {
		t.Errorf("entry %+v", e)
	}
}

func TestRolledBackChangeLeavesNoEntry(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	ctx := context.Background()
	failed := errors.New("the change failed after its entry was written")
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if err := audit.Record(ctx, tx, ws, audit.KeyCreated, target); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("tx: %v", err)
	}
	if got := list(t, ws, audit.Filter{}); len(got) != 0 {
		t.Errorf("a rolled-back change left %d entries: %+v", len(got), got)
	}
}

func TestServerRoleCannotRewriteTheLog(t *testing.T) {
	t.Parallel()
	dir, shard := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	record(t, ws, audit.KeyCreated)
	for _, stmt := range []string{
		"update audit_log set action = 'key.revoked' where workspace_id = $1",
		"delete from audit_log where workspace_id = $1",
	} {
		err := shard.Tx(context.Background(), ws, func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), stmt, ws)
			return err
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s: %v, want permission denied (42501)", stmt, err)
		}
	}
	if got := list(t, ws, audit.Filter{}); len(got) != 1 || got[0].Action != audit.KeyCreated {
		t.Errorf("the entry changed: %+v", got)
	}
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	dir, _ := testdb.Directory(t)
	ws := testdb.Workspace(t, dir, t.Name(), "").ID
	other := testdb.Workspace(t, dir, t.Name()+" other", "").ID
	for _, a := range []string{audit.KeyCreated, audit.KeyRenamed, audit.KeyRevoked} {
		record(t, ws, a)
	}
	record(t, other, audit.KeyCreated)
	all := list(t, ws, audit.Filter{})
	if len(all) != 3 || all[0].Action != audit.KeyRevoked || all[2].Action != audit.KeyCreated {
		t.Fatalf("newest first, this workspace's only: %+v", all)
	}
	if got := list(t, ws, audit.Filter{Action: audit.KeyRenamed}); len(got) != 1 || got[0].ID != all[1].ID {
		t.Errorf("action filter: %+v", got)
	}
	if got := list(t, ws, audit.Filter{Before: &all[0].ID, Limit: 1}); len(got) != 1 || got[0].ID != all[1].ID {
		t.Errorf("page below the first: %+v", got)
	}
	later := all[0].At.Add(time.Microsecond)
	if got := list(t, ws, audit.Filter{Since: &later}); len(got) != 0 {
		t.Errorf("since after the last: %+v", got)
	}
	if got := list(t, ws, audit.Filter{Since: &all[2].At}); len(got) != 3 {
		t.Errorf("since the first: %d entries", len(got))
	}
}
