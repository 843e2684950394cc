package workspacedata

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// batchRows bounds one delete transaction: a large table is emptied in many,
// each short, and a run stopped halfway keeps what it deleted.
const batchRows = 10_000

// verifyRounds bounds how often the erasure deletes rows that appeared behind
// it (a request or job that was already running when the credentials went)
// before it gives up for this run and lets River run it again.
const verifyRounds = 3

// errJobsRunning says a job of the workspace is running: the erasure waits
// for it to end rather than delete its row under it.
var errJobsRunning = errors.New("workspacedata: a job of the workspace is still running")

// eraser runs one erasure; afterTable, when set, is called after each table
// is emptied and may stop the run (tests stop it halfway).
type eraser struct {
	dir        *tenant.Directory
	afterTable func(done int) error
}

// Erase deletes every row of workspace id, the erasure Start began: its River
// jobs, every tenant table's rows (children before parents, each table in
// batches, the progress recorded after each table), its jobs again and
// whatever appeared meanwhile, and last its directory row. Every step can be
// done again, so a run stopped anywhere is finished by the next, which
// resumes after the last table recorded. A workspace already gone, or not
// being erased, is left as it is.
func Erase(ctx context.Context, dir *tenant.Directory, id uuid.UUID) error {
	return eraser{dir: dir}.run(ctx, id)
}

func (r eraser) run(ctx context.Context, id uuid.UUID) error {
	w, err := r.dir.Get(ctx, id)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	e, err := ErasureOf(ctx, r.dir, id)
	if err != nil || e == nil {
		return err
	}
	shard, err := r.dir.ShardOf(w)
	if err != nil {
		return err
	}
	catalog, err := ReadCatalog(ctx, shard.Pool)
	if err != nil {
		return err
	}
	tables := catalog.Tenant()
	slices.Reverse(tables) // children first
	if err := deleteJobs(ctx, shard, id); err != nil {
		return err
	}
	done := e.TablesDone
	if e.TablesTotal != len(tables) {
		done = 0 // the schema changed since the last run: start over
	}
	if err := r.progress(ctx, id, done, len(tables), false); err != nil {
		return err
	}
	for i := done; i < len(tables); i++ {
		if err := deleteRows(ctx, shard, id, tables[i]); err != nil {
			return fmt.Errorf("%s: %w", tables[i].Name, err)
		}
		if err := r.progress(ctx, id, i+1, len(tables), true); err != nil {
			return err
		}
		if r.afterTable != nil {
			if err := r.afterTable(i + 1); err != nil {
				return err
			}
		}
	}
	if err := sweepBehind(ctx, shard, id, tables); err != nil {
		return err
	}
	return finish(ctx, r.dir, id)
}

// sweepBehind deletes the workspace's jobs again and any row written behind
// the erasure, until a look finds none.
func sweepBehind(ctx context.Context, shard *tenant.Shard, id uuid.UUID, tables Catalog) error {
	for round := 1; ; round++ {
		if err := deleteJobs(ctx, shard, id); err != nil {
			return err
		}
		left, err := withRows(ctx, shard, id, tables)
		if err != nil {
			return err
		}
		jobs, err := countJobs(ctx, shard, id)
		if err != nil {
			return err
		}
		if len(left) == 0 && jobs == 0 {
			return nil
		}
		if len(left) == 0 {
			return errJobsRunning
		}
		if round == verifyRounds {
			return fmt.Errorf("workspacedata: rows keep appearing in %s", left[0].Name)
		}
		for _, t := range left {
			if err := deleteRows(ctx, shard, id, t); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
	}
}

// finish deletes the workspace's directory entries again (an operator may
// have invited someone meanwhile) and its directory row, which takes its
// workspace_erasures row with it: the workspace is gone (404).
func finish(ctx context.Context, dir *tenant.Directory, id uuid.UUID) error {
	catalog, err := ReadCatalog(ctx, dir.Pool())
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, dir.Pool(), func(tx pgx.Tx) error {
		if err := deleteDirectoryEntries(ctx, tx, catalog, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "delete from workspaces where id = $1", id); err != nil {
			return err
		}
		return tenant.Invalidate(ctx, tx, tenant.WorkspaceChanged(id))
	})
}

// progress records how far the run got; a run that emptied a table has got
// further than the one that failed, and clears its error.
func (r eraser) progress(ctx context.Context, id uuid.UUID, done, total int, further bool) error {
	sql := `update workspace_erasures set tables_done = $2, tables_total = $3, updated_at = now() where id = $1`
	if further {
		sql = `update workspace_erasures set tables_done = $2, tables_total = $3, last_error = null, updated_at = now()
			where id = $1`
	}
	_, err := r.dir.Pool().Exec(ctx, sql, id, done, total)
	return err
}

// recordError keeps why a run stopped, for GET /admin/v1/workspaces/{id}.
func recordError(ctx context.Context, dir *tenant.Directory, id uuid.UUID, cause error) {
	_, _ = dir.Pool().Exec(context.WithoutCancel(ctx), `update workspace_erasures
		set last_error = $2, updated_at = now() where id = $1`, id, cause.Error())
}

// deleteRows empties one tenant table of the workspace: nothing to do for a
// Cascaded one, whose parents take its rows; otherwise in batches of
// batchRows along the primary key's first column after workspace_id, each its
// own transaction, or in one statement where a batch could break a foreign key
// of the table to itself.
func deleteRows(ctx context.Context, shard *tenant.Shard, id uuid.UUID, t Table) error {
	if t.Cascaded {
		return nil
	}
	all := "delete from " + t.ident() + " where workspace_id = $1"
	if t.SelfRestrict || len(t.Key) == 0 {
		return shard.Tx(ctx, id, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, all, id)
			return err
		})
	}
	key := pgx.Identifier{t.Key[0]}.Sanitize()
	nth := "select " + key + " from " + t.ident() + " where workspace_id = $1 order by " + key + " offset $2 limit 1"
	upTo := "delete from " + t.ident() + " where workspace_id = $1 and " + key + " <= $2"
	for {
		last := false
		err := shard.Tx(ctx, id, func(tx pgx.Tx) error {
			var bound any
			err := tx.QueryRow(ctx, nth, id, batchRows-1).Scan(&bound)
			if errors.Is(err, pgx.ErrNoRows) {
				last = true
				_, err = tx.Exec(ctx, all, id)
				return err
			}
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, upTo, id, bound)
			return err
		})
		if err != nil || last {
			return err
		}
	}
}

// withRows returns the tables that still hold a row of the workspace, read in
// one round trip.
func withRows(ctx context.Context, shard *tenant.Shard, id uuid.UUID, tables Catalog) (Catalog, error) {
	var left Catalog
	err := shard.Read(ctx, id, func(b *pgx.Batch) {
		left = left[:0]
		for _, t := range tables {
			b.Queue("select 1 from "+t.ident()+" where workspace_id = $1 limit 1", id).QueryRow(func(row pgx.Row) error {
				var one int
				err := row.Scan(&one)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				left = append(left, t)
				return err
			})
		}
	})
	return left, err
}

// A workspace's jobs name it in their arguments as workspaceId (every job
// kind of pmapi that belongs to a workspace does); the erasure's own job is
// kept until River's retention of completed jobs removes it.
const (
	deleteJobsSQL = `delete from ` + migrations.RiverSchema + `.river_job
		where args ->> 'workspaceId' = $1 and kind <> $2 and state <> 'running'`
	countJobsSQL = `select count(*) from ` + migrations.RiverSchema + `.river_job
		where args ->> 'workspaceId' = $1 and kind <> $2`
)

// riverPools are the pools whose River tables may hold the shard's jobs: its
// own, and on a routed Citus shard each worker node's (a job is queued on the
// node whose transaction queued it).
func riverPools(shard *tenant.Shard) []*pgxpool.Pool {
	pools := []*pgxpool.Pool{shard.Pool}
	for _, n := range shard.Nodes() {
		if n.Group != 0 {
			pools = append(pools, n.Pool)
		}
	}
	return pools
}

// deleteJobs deletes the workspace's jobs that are not running, on every node.
func deleteJobs(ctx context.Context, shard *tenant.Shard, id uuid.UUID) error {
	for _, p := range riverPools(shard) {
		if _, err := p.Exec(ctx, deleteJobsSQL, id.String(), EraseArgs{}.Kind()); err != nil {
			return fmt.Errorf("the workspace's River jobs: %w", err)
		}
	}
	return nil
}

// countJobs counts the workspace's jobs left on every node.
func countJobs(ctx context.Context, shard *tenant.Shard, id uuid.UUID) (int, error) {
	total := 0
	for _, p := range riverPools(shard) {
		var n int
		if err := p.QueryRow(ctx, countJobsSQL, id.String(), EraseArgs{}.Kind()).Scan(&n); err != nil {
			return 0, fmt.Errorf("the workspace's River jobs: %w", err)
		}
		total += n
	}
	return total, nil
}
