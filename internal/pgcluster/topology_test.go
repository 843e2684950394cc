package pgcluster

import (
	"errors"
	"fmt"
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
