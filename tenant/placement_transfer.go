package tenant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// placementLock serialises isolates and moves on a cluster: each lifts and
// restores FORCE on every distributed table, which must not happen under
// another's running copy.
const placementLock = 7272740002

// forceLockTimeout bounds how long one FORCE change may wait for its table's
// lock. The change needs an exclusive lock, and while it waits every new
// writer of the table queues behind it; a short wait that is retried stalls
// writers for at most this long at a time.
const forceLockTimeout = "500ms"

// forceAttempts bounds the retries of one FORCE change that keeps losing its
// lock to writers (a distributed deadlock or the lock timeout).
const forceAttempts = 40

// transfer runs a shard split or move on one owner connection, one at a time
// per cluster, within the Placer's deadline, with FORCE ROW LEVEL SECURITY
// lifted from the distributed tables meanwhile. Both are blocking transfers,
// whose copy Citus runs as the tables' owner, and FORCE binds the owner to the
// policies: with no workspace set the copy would see no rows. (A non-blocking
// transfer's logical replication fails the same way: PostgreSQL 15's apply
// worker refuses to write into a table whose row-level security is forced on
// its owner, of whom Citus's replication role is a member.) Only FORCE is
// lifted, so the owner role alone bypasses the policies for that time; the
// server's role, which owns nothing, stays bound by them. FORCE comes back even
// when the transfer fails, and on every distributed table, so a transfer cut
// off by a crash is repaired by the next.
func (p *Placer) transfer(
	ctx context.Context,
	pool *pgxpool.Pool,
	fn func(context.Context, *pgxpool.Conn) error,
) (err error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultPlacementTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", int64(placementLock)); err != nil {
		return err
	}
	cleanup := context.WithoutCancel(ctx)
	defer conn.Exec(cleanup, "select pg_advisory_unlock($1)", int64(placementLock))
	rows, err := conn.Query(ctx, `select n.nspname, c.relname from pg_dist_partition p
		join pg_class c on c.oid = p.logicalrelid join pg_namespace n on n.oid = c.relnamespace
		where p.partmethod = 'h' order by 1, 2`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgx.Identifier, error) {
		var schema, name string
		err := r.Scan(&schema, &name)
		return pgx.Identifier{schema, name}, err
	})
	if err != nil {
		return err
	}
	defer func() {
		restore, done := context.WithTimeout(cleanup, 2*time.Minute)
		defer done()
		err = errors.Join(err, setForce(restore, conn, tables, "force"))
	}()
	if err := setForce(ctx, conn, tables, "no force"); err != nil {
		return err
	}
	return fn(ctx, conn)
}

// setForce applies verb ("force" or "no force") to each table's row-level
// security. Citus propagates one DDL statement at a time, to every shard of
// the table; each runs in a transaction of its own with a short lock timeout
// and is retried when writers win the lock.
func setForce(ctx context.Context, conn *pgxpool.Conn, tables []pgx.Identifier, verb string) error {
	for _, table := range tables {
		stmt := "alter table " + table.Sanitize() + " " + verb + " row level security"
		for attempt := 1; ; attempt++ {
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "set local lock_timeout = '"+forceLockTimeout+"'"); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, stmt)
				return err
			})
			if err == nil {
				break
			}
			if !lostLock(err) || attempt == forceAttempts {
				return fmt.Errorf("%s row level security on %s: %w", verb, table.Sanitize(), err)
			}
			if err := sleepBeforeRetry(ctx, min(attempt, 10)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lostLock reports whether a DDL statement failed only because writers held
// its table's locks: a deadlock (local or distributed) or the lock timeout.
func lostLock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeDeadlock || pgErr.Code == "55P03")
}
