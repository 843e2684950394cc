package sqlcheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pmapi/pmapi/internal/sqlcheck"
)

// TestStatementsOnCitus runs every statement of the module that has no run-time
// part on a Citus database, when PMAPI_CITUS_URL names one (migrated and
// distributed, connecting as the server's role). Each runs seven times in a
// rolled-back transaction bound to a fresh workspace, with Citus told to fail
// any statement that needs more than one shard: the sixth execution of a
// prepared statement is the first that may use a generic plan, which some
// statements Citus routes well with a custom plan cannot be. Parameters are the
// workspace for a uuid $1 and NULL otherwise, so this finds planning and
// routing failures, not what only rows reveal (the static rules cover those).
func TestStatementsOnCitus(t *testing.T) {
	url := os.Getenv("PMAPI_CITUS_URL")
	if url == "" {
		t.Skip("set PMAPI_CITUS_URL to a distributed pmapi database on Citus (as pmapi_app) to run the statements there")
	}
	stmts, err := sqlcheck.Statements("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ws := uuid.New()
	seen := map[string]bool{}
	ran := 0
	for _, s := range stmts {
		// Skipped: statements with run-time parts, the benchmark's own, and the
		// migrations', which the owner runs.
		if strings.Contains(s.SQL, sqlcheck.Hole) || seen[s.SQL] || strings.HasPrefix(s.Pos, "cmd/pmbench/") ||
			strings.HasPrefix(s.Pos, "migrations/") {
			continue
		}
		seen[s.SQL] = true
		ran++
		if err := onCitus(ctx, conn, ws, s.SQL); err != nil {
			t.Errorf("%s: %v\n\t%s", s.Pos, err, strings.Join(strings.Fields(s.SQL), " "))
		}
	}
	t.Logf("%d statements ran on Citus", ran)
}

func onCitus(ctx context.Context, conn *pgx.Conn, ws uuid.UUID, sql string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "set local pmapi.workspace_id = '"+ws.String()+"'"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "set local citus.multi_task_query_log_level = 'error'"); err != nil {
		return err
	}
	desc, err := tx.Prepare(ctx, "", sql)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42601" || pgErr.Code == "42501") {
		// The start of a statement built at run time, or the owner's.
		return nil
	}
	if err != nil {
		return err
	}
	args := make([]any, len(desc.ParamOIDs))
	if len(args) > 0 && desc.ParamOIDs[0] == pgtype.UUIDOID {
		args[0] = ws
	}
	for i := range 7 {
		if _, err := tx.Exec(ctx, "savepoint run"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sql, args...)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
			// NULL where a value is needed: the data's fault, not Citus's.
			return nil
		}
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			return nil // the owner's statement
		}
		if err != nil {
			return fmt.Errorf("execution %d: %w", i+1, err)
		}
		if _, err := tx.Exec(ctx, "release savepoint run"); err != nil {
			return err
		}
	}
	return nil
}
