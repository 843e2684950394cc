package search_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/search"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// TestTyposMatchInEitherSettingMode: a typo in a title matches only under the
// search's own trigram threshold (pg_trgm's default of 0.6 misses it), which
// must take effect however the shard sets the workspace: in SetLocal mode, the
// Citus one, the threshold travels as SET LOCAL too.
func TestTyposMatchInEitherSettingMode(t *testing.T) {
	ctx := context.Background()
	for _, mode := range testdb.SettingModes(t) {
		shard := tenant.NewShard("default", testdb.AppPool(t), mode)
		ws, id := uuid.New(), uuid.New()
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			_, err := tx.Exec(
				ctx,
				"insert into projects (workspace_id, id, name) values ($1, $2, 'Hydraulic press upgrade')",
				ws,
				id,
			)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var bySetting bool
		err = shard.Read(ctx, ws, func(b *pgx.Batch) {
			b.Queue("select $1 <<% 'Hydraulic press upgrade'", "hydrolic").
				QueryRow(func(r pgx.Row) error { return r.Scan(&bySetting) })
		})
		if err != nil || bySetting {
			t.Fatalf("the typo matches at pg_trgm's default threshold (%v, %v): it tests nothing", bySetting, err)
		}
		items, _, err := search.Run(ctx, shard, ws, "hydrolic", []facet.Search{project.SearchSource}, search.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].Title != "Hydraulic press upgrade" {
			t.Errorf("mode %d: %+v, want the project", mode, items)
		}
	}
}
