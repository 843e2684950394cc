package authz

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/pmapi/pmapi/internal/tick"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

func sha256Array(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// lastUsedBatcher collects key uses in memory and writes them in one statement
// per workspace, at most once a minute per key: authentication never writes.
type lastUsedBatcher struct {
	mu      sync.Mutex
	pending map[uuid.UUID]keyUse
	written map[uuid.UUID]time.Time
	every   time.Duration
	minGap  time.Duration
}

type keyUse struct {
	shard *tenant.Shard
	ws    uuid.UUID
	at    time.Time
}

func newLastUsedBatcher() *lastUsedBatcher {
	return &lastUsedBatcher{
		pending: map[uuid.UUID]keyUse{},
		written: map[uuid.UUID]time.Time{},
		every:   30 * time.Second,
		minGap:  time.Minute,
	}
}

func (b *lastUsedBatcher) record(shard *tenant.Shard, ws, key uuid.UUID, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last, ok := b.written[key]; ok && at.Sub(last) < b.minGap {
		return
	}
	b.pending[key] = keyUse{shard: shard, ws: ws, at: at}
}

func (b *lastUsedBatcher) run(ctx context.Context) {
	tick.Every(ctx, b.every, func() { _ = b.flush(ctx) })
}

func (b *lastUsedBatcher) flush(ctx context.Context) error {
	b.mu.Lock()
	batch := b.pending
	b.pending = map[uuid.UUID]keyUse{}
	for id, u := range batch {
		b.written[id] = u.at
	}
	// Forget keys whose last write is older than the gap: they may write again.
	for id, at := range b.written {
		if time.Since(at) > b.minGap {
			delete(b.written, id)
		}
	}
	b.mu.Unlock()

	type group struct {
		shard *tenant.Shard
		ids   []uuid.UUID
		// at maps each key id to its use, in microseconds since the epoch.
		at map[string]int64
	}
	groups := map[uuid.UUID]*group{}
	for id, u := range batch {
		g := groups[u.ws]
		if g == nil {
			g = &group{shard: u.shard, at: map[string]int64{}}
			groups[u.ws] = g
		}
		g.ids = append(g.ids, id)
		g.at[id.String()] = u.at.UnixMicro()
	}
	var errs []error
	for ws, g := range groups {
		err := g.shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, lastUsedSQL, ws, g.ids, g.at)
			return err
		})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lastUsedSQL writes a workspace's key uses in one statement that reads no
// other relation: an UPDATE ... FROM unnest(...) is one Citus cannot keep on a
// shard once its plan goes generic. Each row finds its time in a jsonb map by
// its id ($3); to_timestamp of a number, unlike a cast from text, is immutable,
// which Citus needs of what an UPDATE computes from a column.
const lastUsedSQL = `update api_keys k set last_used_at = to_timestamp(($3::jsonb ->> k.id::text)::float8 / 1e6)
	where k.workspace_id = $1 and k.id = any($2)
	  and (k.last_used_at is null or k.last_used_at < to_timestamp(($3::jsonb ->> k.id::text)::float8 / 1e6))`
