package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

// TestTheOutboxKeepsItsHeap: migration 0016 turns vacuum's truncation off for
// events, and on Citus every shard of it has the setting too (vacuum runs on
// the shards, the workers' tables).
func TestTheOutboxKeepsItsHeap(t *testing.T) {
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	var opts []string
	err := pool.QueryRow(ctx, "select coalesce(reloptions, '{}') from pg_class where oid = 'events'::regclass").
		Scan(&opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts, "vacuum_truncate=false") {
		t.Errorf("events has options %v, want vacuum_truncate=false", opts)
	}
	citus, err := migrations.HasCitus(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !citus {
		return
	}
	rows, err := pool.Query(ctx, `select shardid, success, result from run_command_on_shards('events',
		$$select coalesce(reloptions, '{}')::text from pg_class where oid = '%s'::regclass$$)`)
	if err != nil {
		t.Fatal(err)
	}
	type shard struct {
		ID      int64
		OK      bool
		Options string
	}
	shards, err := pgx.CollectRows(rows, pgx.RowToStructByPos[shard])
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) == 0 {
		t.Fatal("events has no shards")
	}
	t.Logf("%d shards of events on Citus", len(shards))
	for _, s := range shards {
		if !s.OK || s.Options != "{vacuum_truncate=false}" {
			t.Errorf("shard %d of events: %v %s, want {vacuum_truncate=false}", s.ID, s.OK, s.Options)
		}
	}
}
