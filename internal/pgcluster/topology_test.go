package pgcluster

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestOnlyAFailedEssentialConnectionIsRetried: the join that Citus could not
// make reach the worker goes again (syncNodes), any other error of
// citus_add_node (a bad address, a node that is already a coordinator) does
// not, nor does an internal error with another message.
func TestOnlyAFailedEssentialConnectionIsRetried(t *testing.T) {
	essential := &pgconn.PgError{Code: "XX000", Message: "failure on connection marked as essential: 127.0.0.1:40087"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{essential, true},
		{fmt.Errorf("join worker: %w", essential), true},
		{&pgconn.PgError{Code: "XX000", Message: "could not find the coordinator"}, false},
		{&pgconn.PgError{Code: "55000", Message: "Node cannot add itself as a worker."}, false},
		{errors.New("failure on connection marked as essential"), false},
	} {
		if got := isEssentialConnectionFailure(c.err); got != c.want {
			t.Errorf("%v: retried %v, want %v", c.err, got, c.want)
		}
	}
}

// TestASyncRunsAgainOnlyAfterALostConnectionOrNode: a lost session or
// connection, or a node Citus could not reach, gives the sync another run;
// an error of a statement does not.
func TestASyncRunsAgainOnlyAfterALostConnectionOrNode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("%w: conn closed", errSessionEnded), true},
		{fmt.Errorf("join worker: %w: %w", errNodeUnreachable, errors.New("x")), true},
		{&pgconn.PgError{Code: "42P01", Message: `relation "pg_dist_node" does not exist`}, false},
		{errors.New("no such host"), false},
	} {
		if got := syncAgain(c.err); got != c.want {
			t.Errorf("%v: again %v, want %v", c.err, got, c.want)
		}
	}
}
