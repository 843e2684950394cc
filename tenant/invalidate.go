package tenant

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// InvalidationChannel is the LISTEN/NOTIFY channel on which a change to a
// credential or a workspace tells every server instance to drop its cached copy.
// The notification is sent inside the changing transaction, so it is delivered
// exactly when the change commits and never for a rolled-back one.
const InvalidationChannel = "pmapi_invalidate"

// Invalidation names what changed.
type Invalidation struct {
	Kind string // "key", "client" or "workspace"
	ID   string
}

// KeyChanged, ClientChanged and WorkspaceChanged build invalidations.
func KeyChanged(id uuid.UUID) Invalidation       { return Invalidation{"key", id.String()} }
func ClientChanged(id string) Invalidation       { return Invalidation{"client", id} }
func WorkspaceChanged(id uuid.UUID) Invalidation { return Invalidation{"workspace", id.String()} }

func (i Invalidation) String() string { return i.Kind + ":" + i.ID }

// ParseInvalidation reads a notification payload.
func ParseInvalidation(payload string) (Invalidation, bool) {
	kind, id, ok := strings.Cut(payload, ":")
	if !ok || id == "" {
		return Invalidation{}, false
	}
	return Invalidation{kind, id}, true
}

// Invalidate queues the notification in tx.
func Invalidate(ctx context.Context, tx pgx.Tx, inv Invalidation) error {
	_, err := tx.Exec(ctx, "select pg_notify($1, $2)", InvalidationChannel, inv.String())
	return err
}

// Listen delivers every invalidation published on any shard to on, until ctx
// ends. A lost connection may have lost notifications, so after any error
// (including the first connect) reset is called before listening again: the
// subscriber drops everything it cached.
func Listen(ctx context.Context, shards *Shards, on func(Invalidation), reset func(), ready func()) {
	var wg sync.WaitGroup
	all := shards.All()
	var started sync.WaitGroup
	started.Add(len(all))
	for _, s := range all {
		wg.Add(1)
		go func(s *Shard) {
			defer wg.Done()
			listenShard(ctx, s, on, reset, started.Done)
		}(s)
	}
	if ready != nil {
		go func() { started.Wait(); ready() }()
	}
	wg.Wait()
}

func listenShard(ctx context.Context, s *Shard, on func(Invalidation), reset func(), started func()) {
	var once sync.Once
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := func() error {
			pooled, err := s.Pool.Acquire(ctx)
			if err != nil {
				return err
			}
			// A listening connection must not go back to the pool.
			conn := pooled.Hijack()
			defer conn.Close(context.WithoutCancel(ctx))
			if _, err := conn.Exec(ctx, "listen "+InvalidationChannel); err != nil {
				return err
			}
			reset()
			once.Do(started)
			backoff = 100 * time.Millisecond
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					return err
				}
				if inv, ok := ParseInvalidation(n.Payload); ok {
					on(inv)
				}
			}
		}()
		if ctx.Err() != nil {
			return
		}
		_ = err
		reset()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}
