package tenant

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
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
	Help: "Tenant transactions run again after a deadlock (40P01), a serialization failure (40001) or a connection that failed before sending anything (conn), by SQLSTATE.",
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
	return "", false
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
