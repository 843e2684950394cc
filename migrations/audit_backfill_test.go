package migrations_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

// auditBefore is the last migration before the audit log is partitioned.
const auditBefore = 26

// TestAuditPartitionsKeepEveryEntry: migration 0028 moves the entries of a
// database from before it into the partitioned audit_log, every value kept
// and the oldest days in one partition, and the server's statements work on
// it afterwards: an entry is appended and read, none can be changed or
// deleted, an erasure still removes the workspace's entries through its
// stream row, and another workspace sees none of them.
func TestAuditPartitionsKeepEveryEntry(t *testing.T) {
	ctx := context.Background()
	admin := testdb.AdminURL(t)
	name := fmt.Sprintf("pmapi_ap_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := pgcluster.CreateDatabase(ctx, admin, name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pgcluster.DropDatabase(context.Background(), admin, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	if err := migrations.ApplyThrough(ctx, db.OwnerURL, auditBefore); err != nil {
		t.Fatal(err)
	}
	owner := testdb.Conn(t, db.OwnerURL)
	app := testdb.Conn(t, db.AppURL)
	ws, other := uuid.New(), uuid.New()
	now := time.Now().Truncate(time.Microsecond)
	ats := map[uuid.UUID]time.Time{
		uuid.New(): now.Add(-40 * 24 * time.Hour),
		uuid.New(): now.Add(-3 * 24 * time.Hour),
		uuid.New(): now,
	}
	for _, w := range []uuid.UUID{ws, other} {
		err = testdb.InWorkspace(t, owner, w.String(), func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "insert into workspaces (id, name, console_client_id) values ($1, 'w', $2)",
				w, w.String())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err = testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into audit_streams (workspace_id) values ($1)", ws); err != nil {
			return err
		}
		for id, at := range ats {
			if _, err := tx.Exec(ctx, `insert into audit_log (workspace_id, id, at, actor_type, actor_id, action,
				target_type, target_id, ip, request_id) values ($1, $2, $3, 'user', 'u1', 'key.created', 'key', 'k1',
				'192.0.2.1', 'req-1')`, ws, id, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		t.Fatal(err)
	}

	var partitions int
	var oldestEnd time.Time
	if err := owner.QueryRow(ctx, `select count(*), min(pmapi_partition_end(inhrelid::regclass)) from pg_inherits
		where inhparent = 'audit_log'::regclass`).Scan(&partitions, &oldestEnd); err != nil {
		t.Fatal(err)
	}
	// The days before today in one partition, then today and the next week.
	if partitions != 9 {
		t.Errorf("audit_log has %d partitions, want 9", partitions)
	}
	err = testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select id, at, actor_type || ' ' || actor_id || ' ' || action || ' ' || target_type
			|| ' ' || target_id || ' ' || ip || ' ' || request_id from audit_log where workspace_id = $1`, ws)
		if err != nil {
			return err
		}
		var id uuid.UUID
		var at time.Time
		var rest string
		seen := 0
		if _, err := pgx.ForEachRow(rows, []any{&id, &at, &rest}, func() error {
			seen++
			if want, ok := ats[id]; !ok || !at.Equal(want) || rest != "user u1 key.created key k1 192.0.2.1 req-1" {
				return fmt.Errorf("entry %s after 0028: %v %q", id, at, rest)
			}
			return nil
		}); err != nil {
			return err
		}
		if seen != len(ats) {
			return fmt.Errorf("%d entries after 0028, want %d", seen, len(ats))
		}
		_, err = tx.Exec(ctx, `insert into audit_log (workspace_id, id, actor_type, actor_id, action, target_type,
			target_id) values ($1, $2, 'app', 'app1', 'key.revoked', 'key', 'k1')`, ws, uuid.New())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"update audit_log set action = 'key.renamed'", "delete from audit_log"} {
		err := testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("the server's role: %s: %v, want permission denied", stmt, err)
		}
	}
	count := func(as uuid.UUID) int {
		var n int
		err := testdb.InWorkspace(t, app, as.String(), func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "select count(*) from audit_log where workspace_id = $1", ws).Scan(&n)
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(other); n != 0 {
		t.Errorf("another workspace sees %d entries", n)
	}
	if n := count(ws); n != len(ats)+1 {
		t.Errorf("%d entries after an append, want %d", n, len(ats)+1)
	}
	err = testdb.InWorkspace(t, app, ws.String(), func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "delete from audit_streams where workspace_id = $1", ws)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var left int
	if err := testdb.Conn(t, db.AdminURL).QueryRow(ctx, "select count(*) from audit_log where workspace_id = $1",
		ws).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d entries left after the workspace's stream row was deleted, want none", left)
	}
}
