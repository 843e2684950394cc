package tenant

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/pmapi/pmapi"
)

// maxTxAttempts bounds how often Tx runs one transaction: a conflict that
// survives three runs is contention to report, not to hide.
const maxTxAttempts = 3

// SQLSTATEs after which running the whole transaction again can succeed.
const (
	codeDeadlock      = "40P01"
	codeSerialization = "40001"
)

var txRetries = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "pmapi_db_tx_retries_total",
	Help: "Tenant transactions and reads run again after a deadlock (40P01), a serialization failure (40001), a " +
		"Citus placement change under them (XX000, 42P01) or a connection that failed before sending anything (conn), " +
		"by SQLSTATE.",
}, []string{"sqlstate"})

// retryable reports whether err ended its transaction in a way that a fresh run
// may not meet again, and the SQLSTATE that says so ("conn" for a connection
// that failed before the transaction reached the server).
func retryable(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		if err != nil && pgconn.SafeToRetry(err) {
			return "conn", true
		}
		return "", false
	}
	switch pgErr.Code {
	case codeDeadlock, codeSerialization:
		return pgErr.Code, true
	}
	return pgErr.Code, placementMoved(pgErr)
}

// shardTableGone matches PostgreSQL's undefined-table message for a Citus
// shard (the table's name and its shard id): pmapi's own statements name
// only tables that the migrations create.
var shardTableGone = regexp.MustCompile(`^relation "[^"]*_[0-9]+" does not exist$`)

// placementMoved reports whether a statement failed because a workspace
// isolate or move (Citus's shard split or placement move) committed between
// the coordinator choosing a shard for the statement and reaching it: the
// shard is gone from the metadata ("could not find valid entry for shard",
// a read planned just before a split), a write found its shard split away
// (Citus's own 40001, "shard for the given value does not exist", whose hint
// is to retry), or the old placement was dropped by Citus's deferred cleanup.
// Run again, the statement is routed by the new metadata.
func placementMoved(pgErr *pgconn.PgError) bool {
	switch pgErr.Code {
	case "XX000":
		return strings.HasPrefix(pgErr.Message, "could not find valid entry for shard ")
	case codeSerialization:
		return pgErr.Message == "shard for the given value does not exist"
	case "42P01":
		return shardTableGone.MatchString(pgErr.Message)
	}
	return false
}

// errMoving is the answer when a statement still meets a placement change
// after its reruns, or when it cannot be run again: 503, as the move's
// switch-over lasts a moment and the same call then succeeds.
func errMoving(err error) error {
	return pmapi.Errorf(pmapi.CodeServiceUnavailable,
		"the workspace's data is moving between database nodes; retry in a moment").
		Wrap(err)
}

// sleepBeforeRetry waits a random 5 to 25 ms times the attempt, so the two sides
// of a deadlock do not meet again in lockstep.
func sleepBeforeRetry(ctx context.Context, attempt int) error {
	d := time.Duration(attempt) * (5*time.Millisecond + rand.N(20*time.Millisecond))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// movedCode reports whether err is a placement change (placementMoved) and
// its SQLSTATE.
func movedCode(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !placementMoved(pgErr) {
		return "", false
	}
	return pgErr.Code, true
}
