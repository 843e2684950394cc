package authz

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

func testShard(t *testing.T) (*tenant.Shard, uuid.UUID) {
	t.Helper()
	return tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t)), uuid.New()
}

// TestLastUsedFlushWritesEachKeysOwnTime: one statement per workspace gives
// every key its own time, to the microsecond, and never moves one back.
func TestLastUsedFlushWritesEachKeysOwnTime(t *testing.T) {
	ctx := context.Background()
	shard, ws := testShard(t)
	keys := []uuid.UUID{pmapi.NewID(), pmapi.NewID(), pmapi.NewID()}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		for i, k := range keys {
			if _, err := tx.Exec(ctx, `insert into api_keys (workspace_id, id, client_id, name, prefix, last_four, hash)
				values ($1, $2, 'app', 'k', 'pk_', '0000', $3)`, ws, k, []byte{byte(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Truncate(time.Microsecond)
	at := []time.Time{base.Add(-time.Hour), base.Add(-time.Minute), base.Add(-time.Microsecond)}
	b := newLastUsedBatcher()
	for i, k := range keys {
		b.record(shard, ws, k, at[i])
	}
	if err := b.flush(ctx); err != nil {
		t.Fatal(err)
	}
	stored := func() []time.Time {
		out := make([]time.Time, len(keys))
		err := shard.Read(ctx, ws, func(bt *pgx.Batch) {
			for i, k := range keys {
				bt.Queue("select last_used_at from api_keys where workspace_id = $1 and id = $2", ws, k).
					QueryRow(func(r pgx.Row) error { return r.Scan(&out[i]) })
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for i, got := range stored() {
		if !got.Equal(at[i]) {
			t.Errorf("key %d: last used %v, want %v", i, got, at[i])
		}
	}
	// An older use (a flush that lost a race) does not move a key back.
	b = newLastUsedBatcher()
	b.record(shard, ws, keys[2], base.Add(-2*time.Hour))
	if err := b.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := stored()[2]; !got.Equal(at[2]) {
		t.Errorf("an older use moved last_used_at back to %v", got)
	}
}

// TestRevokingAGrantTwiceKeepsTheFirstTime.
func TestRevokingAGrantTwiceKeepsTheFirstTime(t *testing.T) {
	ctx := context.Background()
	shard, ws := testShard(t)
	grant := pmapi.NewID()
	revoke := func() (at time.Time) {
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			if err := revokeGrant(ctx, tx, ws, grant); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "select revoked_at from oauth_grants where workspace_id = $1 and id = $2", ws, grant).
				Scan(&at)
		})
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		_, err := tx.Exec(
			ctx,
			`insert into oauth_grants (workspace_id, id, client_id, user_id, scopes) values ($1, $2, 'app', $3, '{}')`,
			ws,
			grant,
			uuid.New(),
		)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	first := revoke()
	if again := revoke(); !again.Equal(first) {
		t.Errorf("a second revocation moved revoked_at from %v to %v", first, again)
	}
}
