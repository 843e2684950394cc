package workspacedata_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// TestCatalogHasEveryTable: the catalog the export and the erasure walk is
// every table with a workspace_id column, the tenant ones exactly those under
// row-level security, each after the tables its foreign keys refer to.
func TestCatalogHasEveryTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	catalog, err := workspacedata.ReadCatalog(ctx, testdb.AppPool(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(slices.Values(catalog.Names())), rowTables(t); !slices.Equal(got, want) {
		t.Errorf("catalog %v\nwant %v", got, want)
	}
	// Every table of pmapi's has a class; a Citus shard, which pmapi's
	// connections must not see as a table, has none.
	for _, name := range catalog.Names() {
		var classed bool
		if err := testdb.AppPool(t).QueryRow(ctx, "select exists (select 1 from schema_table_classes where table_name = $1)",
			name).Scan(&classed); err != nil || !classed {
			t.Errorf("%s has no table class (%v): not one of pmapi's tables", name, err)
		}
	}
	tenant := slices.Sorted(slices.Values(catalog.Tenant().Names()))
	if want := slices.Sorted(slices.Values(testdb.TenantTables(t))); !slices.Equal(tenant, want) {
		t.Errorf("tenant tables %v\nwant %v", tenant, want)
	}
	rows, err := testdb.OwnerPool(t).Query(ctx, `select c.relname, p.relname from pg_constraint f
		join pg_class c on c.oid = f.conrelid join pg_class p on p.oid = f.confrelid
		where f.contype = 'f' and c.relnamespace = 'public'::regnamespace and c.oid <> p.oid`)
	if err != nil {
		t.Fatal(err)
	}
	type fk struct{ Child, Parent string }
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fk])
	if err != nil {
		t.Fatal(err)
	}
	names := catalog.Names()
	for _, k := range keys {
		ci, pi := slices.Index(names, k.Child), slices.Index(names, k.Parent)
		if ci >= 0 && pi >= 0 && pi > ci {
			t.Errorf("%s comes before %s, which its foreign key refers to", k.Child, k.Parent)
		}
	}
	for _, table := range catalog.Tenant() {
		if !table.Deletable && !table.Cascaded {
			t.Errorf("%s: pmapi's role may not delete its rows and no cascading foreign key does", table.Name)
		}
	}
}
