package tenant

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/pmapi/pmapi"
)

// taskProjectKey is the foreign key a task names its project by.
const taskProjectKey = "tasks_workspace_id_project_id_fkey"

// TestDBErrorMapsEveryClass: each class of database refusal gets its code,
// a store's own error passes unchanged, and what is not the database's stays
// INTERNAL.
func TestDBErrorMapsEveryClass(t *testing.T) {
	t.Parallel()
	pg := func(code, msg, constraint string) error {
		return fmt.Errorf("insert: %w", &pgconn.PgError{Code: code, Message: msg, ConstraintName: constraint})
	}
	own := pmapi.NotFound("task")
	for _, c := range []struct {
		name string
		err  error
		want pmapi.Code
		msg  string
	}{
		{"unique", pg("23505", "duplicate key", "x_pkey"), pmapi.CodeConflict, ""},
		{
			"fk insert",
			pg("23503", `insert or update on table "tasks" violates foreign key constraint`, taskProjectKey),
			pmapi.CodeNotFound, "project not found",
		},
		{
			"fk insert, other name",
			pg("23503", "insert or update", "corrective_actions_node_fkey"),
			pmapi.CodeNotFound, "referenced record not found",
		},
		{
			"fk delete",
			pg("23503", `update or delete on table "projects" violates foreign key constraint`, taskProjectKey),
			pmapi.CodeConflict, "",
		},
		{"check", pg("23514", "check", "tasks_priority_check"), pmapi.CodeValidation, ""},
		{"date out of range", pg("22008", "date/time field value out of range", ""), pmapi.CodeValidation, ""},
		{"bad characters", pg("22021", "invalid byte sequence", ""), pmapi.CodeValidation, ""},
		{"deadlock after retries", pg("40P01", "deadlock detected", ""), pmapi.CodeConflict, ""},
		{"serialization after retries", pg("40001", "could not serialize", ""), pmapi.CodeConflict, ""},
		{
			"admin shutdown", pg("57P01", "terminating connection due to administrator command", ""),
			pmapi.CodeServiceUnavailable, "",
		},
		{"starting up", pg("57P03", "the database system is starting up", ""), pmapi.CodeServiceUnavailable, ""},
		{"too many connections", pg("53300", "too many clients", ""), pmapi.CodeServiceUnavailable, ""},
		{"connection failure", pg("08006", "connection failure", ""), pmapi.CodeServiceUnavailable, ""},
		{"cannot connect", &pgconn.ConnectError{}, pmapi.CodeServiceUnavailable, ""},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), pmapi.CodeServiceUnavailable, ""},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), pmapi.CodeServiceUnavailable, ""},
		{"lost mid-read", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), pmapi.CodeServiceUnavailable, ""},
		{"conn closed", fmt.Errorf("exec: %w", pgconn.ErrConnClosed), pmapi.CodeServiceUnavailable, ""},
		{"pool closed", fmt.Errorf("acquire: %w", puddle.ErrClosedPool), pmapi.CodeServiceUnavailable, ""},
		{"a store's own", fmt.Errorf("lock: %w", own), pmapi.CodeNotFound, "task not found"},
		{"not the database's", errors.New("boom"), pmapi.CodeInternal, ""},
		{"cancelled", context.Canceled, pmapi.CodeInternal, ""},
	} {
		got := pmapi.AsError(DBError(c.err))
		if got.Code != c.want || c.msg != "" && got.Message != c.msg {
			t.Errorf("%s: %s %q, want %s %q", c.name, got.Code, got.Message, c.want, c.msg)
		}
	}
	if DBError(nil) != nil {
		t.Error("nil is not nil")
	}
}
