package tenant

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/pmapi/pmapi"
)

// DBError is the one mapping from what the database refuses to the API's
// codes, so that no pgx error reaches a client as an INTERNAL error:
//
//   - unique violation: 409 CONFLICT (two requests raced for the same key);
//   - foreign key on insert or update: 404 NOT_FOUND of the referenced row (it
//     went away meanwhile); on delete: 409 CONFLICT (rows still refer to it);
//   - check, bad characters, value or date out of range: 400 VALIDATION_FAILED;
//   - deadlock or serialization failure left after Tx's own retries: 409
//     CONFLICT, to be retried by the client;
//   - a database that is down, restarting, refusing connections or out of
//     them, or a pool that is closed: 503 SERVICE_UNAVAILABLE (Retry-After).
//
// An error that already is a *pmapi.Error passes unchanged: the store that
// made it knew better. Anything else passes unchanged too and ends INTERNAL.
func DBError(err error) error {
	if err == nil {
		return nil
	}
	var e *pmapi.Error
	if errors.As(err, &e) {
		return err
	}
	if Unavailable(err) {
		return pmapi.Errorf(pmapi.CodeServiceUnavailable, "the database is unavailable; retry shortly").Wrap(err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case "23505": // unique_violation
		return pmapi.Errorf(pmapi.CodeConflict, "a concurrent request created the same record; retry the request").Wrap(err)
	case "23503": // foreign_key_violation
		if strings.HasPrefix(pgErr.Message, "update or delete") {
			return pmapi.Errorf(pmapi.CodeConflict, "other records still refer to this one").Wrap(err)
		}
		return pmapi.NotFound(referenced(pgErr.ConstraintName)).Wrap(err)
	case "23514", "23502", "22001", "22003", "22007", "22008", "22021", "22P02", "22P05":
		// check, not null, too long, out of range, bad date or time, bad
		// characters, bad text representation, untranslatable character
		e := pmapi.Errorf(pmapi.CodeValidation, "a field holds a value the database refuses")
		if pgErr.ColumnName != "" {
			e = e.With("field", pgErr.ColumnName)
		}
		return e.Wrap(err)
	case codeDeadlock, codeSerialization:
		return pmapi.Errorf(pmapi.CodeConflict, "a concurrent change touched the same records; retry the request").Wrap(err)
	}
	return err
}

// unavailableStates are the SQLSTATEs of a server that cannot serve now but
// may soon: connection exceptions (class 08), too many connections, and a
// server shutting down, crashed or still starting.
var unavailableStates = map[string]bool{
	"53300": true, // too_many_connections
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now
	"57P05": true, // idle_session_timeout
}

// Unavailable reports whether err says the database could not be reached or
// dropped the connection, rather than refusing the statement.
func Unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableStates[pgErr.Code] || strings.HasPrefix(pgErr.Code, "08")
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// referenced names what a foreign key points at, for its not-found message,
// from PostgreSQL's default name for a tenant key: "project" for
// tasks_workspace_id_project_id_fkey.
func referenced(constraint string) string {
	_, col, ok := strings.Cut(strings.TrimSuffix(constraint, "_fkey"), "_workspace_id_")
	if !ok || !strings.HasSuffix(col, "_id") {
		return "referenced record"
	}
	return strings.ReplaceAll(strings.TrimSuffix(col, "_id"), "_", " ")
}
