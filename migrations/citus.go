package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Table classes on a Citus cluster, as recorded in schema_table_classes by the
// migration that creates each table (pmapi_place).
const (
	ClassReference   = "reference"
	ClassDistributed = "distributed"
	ClassLocal       = "local"
)

// HasCitus reports whether the citus extension is installed in the database
// behind q: the one signal that decides whether tables are distributed.
func HasCitus(ctx context.Context, q querier) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&ok)
	return ok, err
}

// placeOnCitus applies every recorded table class and makes pmapi's own
// functions exist on every node. Migrations place the tables they create
// already; this pass covers a database migrated before the extension was
// installed (docs/operations.md, "Distributing an existing database"), and is a
// no-op on a database that is placed already, or without Citus.
func placeOnCitus(ctx context.Context, conn *pgx.Conn) error {
	citus, err := HasCitus(ctx, conn)
	if err != nil || !citus {
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "select pmapi_place(table_name, class) from schema_table_classes order by ordinal")
		if err != nil {
			return fmt.Errorf("place tables on citus: %w", err)
		}
		// Queries routed to a worker run pmapi's functions (rrca_text_similarity)
		// there. Citus propagates functions created after the extension by
		// itself; this catches those created before it.
		rows, err := tx.Query(ctx, `select p.oid::regprocedure::text from pg_proc p
			join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = 'public'
			and not exists (select 1 from pg_depend d
				where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
			and not exists (select 1 from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid)`)
		if err != nil {
			return err
		}
		functions, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, f := range functions {
			if _, err := tx.Exec(ctx, "select create_distributed_function($1)", f); err != nil {
				return fmt.Errorf("propagate %s: %w", f, err)
			}
		}
		return nil
	})
}
