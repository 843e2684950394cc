package workspacedata

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Table is one table that holds workspaces' rows.
type Table struct {
	Name string
	// Tenant tables are under row-level security and live on the workspace's
	// shard; the others are the directory's.
	Tenant bool
	// Key is the primary key's columns after workspace_id: the export's row
	// order and the erasure's batches.
	Key []string
	// SelfRestrict is set when a foreign key of the table refers to the table
	// itself without ON DELETE CASCADE: a batch could then delete a parent
	// whose child waits for a later batch, so the table goes in one statement.
	SelfRestrict bool
	// Deletable says pmapi's role may delete the table's rows. One it may only
	// append to (an action item's execution logs, a delivery's attempts) is
	// Cascaded when a foreign key that cascades ties each row to a parent in
	// the catalog: deleting the parents deletes its rows, with the owner's
	// rights.
	Deletable, Cascaded bool
}

// ident is the table's name quoted for SQL.
func (t Table) ident() string { return pgx.Identifier{t.Name}.Sanitize() }

// Catalog is every table with a workspace_id column, parents before the
// tables whose foreign keys refer to them: the order an export is read in,
// and reversed the order an erasure deletes in.
type Catalog []Table

// Tenant returns the tables under row-level security, in the catalog's order.
func (c Catalog) Tenant() Catalog {
	return slices.DeleteFunc(slices.Clone(c), func(t Table) bool { return !t.Tenant })
}

// Directory returns the tables without row-level security, in the catalog's
// order.
func (c Catalog) Directory() Catalog {
	return slices.DeleteFunc(slices.Clone(c), func(t Table) bool { return t.Tenant })
}

// Names lists the tables' names in order.
func (c Catalog) Names() []string {
	out := make([]string, len(c))
	for i, t := range c {
		out[i] = t.Name
	}
	return out
}

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// The tables of the public schema with a workspace_id column: partitioned
// tables by their parent (a partition is read and deleted through it), never a
// view. On Citus the shards of a table are hidden from pg_class for pmapi's
// connections, so only the tables themselves appear.
const tablesSQL = `select c.relname, c.relrowsecurity, has_table_privilege(c.oid, 'delete'),
		coalesce((select array_agg(a.attname::text order by k.ord)
			from pg_index i cross join unnest(i.indkey) with ordinality k(attnum, ord)
			join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
			where i.indrelid = c.oid and i.indisprimary), '{}')
	from pg_class c
	where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition
	  and exists (select 1 from pg_attribute a
		where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
	order by c.relname`

// The foreign keys between tables of the public schema, and whether each
// cascades on delete.
const foreignKeysSQL = `select c.relname, p.relname, f.confdeltype = 'c'
	from pg_constraint f
	join pg_class c on c.oid = f.conrelid
	join pg_class p on p.oid = f.confrelid
	where f.contype = 'f' and c.relnamespace = 'public'::regnamespace and p.relnamespace = 'public'::regnamespace`

// ReadCatalog lists the tables from the catalog of the database q reaches;
// every shard has the same schema.
func ReadCatalog(ctx context.Context, q querier) (Catalog, error) {
	rows, err := q.Query(ctx, tablesSQL)
	if err != nil {
		return nil, fmt.Errorf("workspacedata: the catalog's tables: %w", err)
	}
	var tables []Table
	for rows.Next() {
		var t Table
		var key []string
		if err := rows.Scan(&t.Name, &t.Tenant, &t.Deletable, &key); err != nil {
			rows.Close()
			return nil, err
		}
		for _, k := range key {
			if k != "workspace_id" {
				t.Key = append(t.Key, k)
			}
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.Query(ctx, foreignKeysSQL)
	if err != nil {
		return nil, fmt.Errorf("workspacedata: the catalog's foreign keys: %w", err)
	}
	var keys []foreignKey
	for rows.Next() {
		var k foreignKey
		if err := rows.Scan(&k.child, &k.parent, &k.cascade); err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return order(tables, keys)
}

type foreignKey struct {
	child, parent string
	cascade       bool
}

// order sorts tables parents first (Kahn's algorithm, by name among equals so
// the order is the same every time); a foreign key to a table that holds no
// workspace's rows (workspaces itself) does not constrain it. A cycle other
// than a table referring to itself is refused: no order of whole-table
// deletes could satisfy it.
func order(tables []Table, keys []foreignKey) (Catalog, error) {
	byName := map[string]*Table{}
	for i := range tables {
		byName[tables[i].Name] = &tables[i]
	}
	parents := map[string]map[string]bool{}
	for _, k := range keys {
		if byName[k.child] == nil || byName[k.parent] == nil {
			continue
		}
		if k.child == k.parent {
			byName[k.child].SelfRestrict = byName[k.child].SelfRestrict || !k.cascade
			continue
		}
		if k.cascade && !byName[k.child].Deletable {
			byName[k.child].Cascaded = true
		}
		if parents[k.child] == nil {
			parents[k.child] = map[string]bool{}
		}
		parents[k.child][k.parent] = true
	}
	var out Catalog
	placed := map[string]bool{}
	for len(out) < len(tables) {
		progressed := false
		for _, t := range tables { // tables are in name order
			if placed[t.Name] {
				continue
			}
			ready := true
			for p := range parents[t.Name] {
				ready = ready && placed[p]
			}
			if ready {
				out = append(out, *byName[t.Name])
				placed[t.Name] = true
				progressed = true
			}
		}
		if !progressed {
			var left []string
			for _, t := range tables {
				if !placed[t.Name] {
					left = append(left, t.Name)
				}
			}
			return nil, fmt.Errorf("workspacedata: foreign keys form a cycle among %s", strings.Join(left, ", "))
		}
	}
	return out, nil
}
