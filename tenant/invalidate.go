package tenant

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/pmapi/pmapi/internal/tick"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// InvalidationChannel is the LISTEN/NOTIFY channel on which a change to a
// credential or a workspace tells every server instance to drop its cached copy.
// The notification is sent inside the changing transaction, so it is delivered
// exactly when the change commits and never for a rolled-back one.
const InvalidationChannel = "pmapi_invalidate"

// Invalidation names what changed.
type Invalidation struct {
	Kind string // "key", "client", "workspace" or "placement"
	ID   string
}

// KeyChanged, ClientChanged and WorkspaceChanged build invalidations.
func KeyChanged(id uuid.UUID) Invalidation       { return Invalidation{"key", id.String()} }
func ClientChanged(id string) Invalidation       { return Invalidation{"client", id} }
func WorkspaceChanged(id uuid.UUID) Invalidation { return Invalidation{"workspace", id.String()} }

// PlacementChanged says a workspace's shard group was isolated or moved:
// every instance reads its workspaces' nodes anew (the group's other
// workspaces moved with it).
func PlacementChanged(id uuid.UUID) Invalidation { return Invalidation{"placement", id.String()} }

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
// ends. A routed shard's transactions run on its nodes, and a notification
// goes out from the node its transaction committed on, so Listen listens on
// every node of it too, and on nodes it finds later. A lost connection may
// have lost notifications, so after any error (including the first connect)
// reset is called before listening again: the subscriber drops everything it
// cached. ready is called once every shard and node listens.
func Listen(ctx context.Context, shards *Shards, on func(Invalidation), reset func(), ready func()) {
	var wg sync.WaitGroup
	var started sync.WaitGroup
	for _, s := range shards.All() {
		listened := map[*pgxpool.Pool]bool{s.Pool: true}
		sources := []*pgxpool.Pool{s.Pool}
		for _, n := range s.Nodes() {
			if n.Group != 0 && !listened[n.Pool] {
				listened[n.Pool] = true
				sources = append(sources, n.Pool)
			}
		}
		started.Add(len(sources))
		for _, pool := range sources {
			wg.Go(func() { listenPool(ctx, s, pool, on, reset, started.Done) })
		}
		if s.router == nil {
			continue
		}
		refresh := s.router.opts.Refresh
		wg.Go(func() {
			tick.Every(ctx, refresh, func() {
				for _, n := range s.Nodes() {
					if n.Group != 0 && !listened[n.Pool] {
						listened[n.Pool] = true
						wg.Go(func() { listenPool(ctx, s, n.Pool, on, reset, func() {}) })
					}
				}
			})
		})
	}
	if ready != nil {
		go func() { started.Wait(); ready() }()
	}
	wg.Wait()
}

// listenPool listens on one connection of pool until ctx ends, or, for a
// node's pool, until the shard no longer uses it (the node left or moved).
func listenPool(ctx context.Context, s *Shard, pool *pgxpool.Pool, on func(Invalidation), reset, started func()) {
	var once sync.Once
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := func() error {
			pooled, err := pool.Acquire(ctx)
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
					if inv.Kind == "placement" {
						s.ForgetRoutes()
					}
					on(inv)
				}
			}
		}()
		if ctx.Err() != nil {
			return
		}
		_ = err
		reset()
		if pool != s.Pool && !s.usesPool(pool) {
			once.Do(started)
			return
		}
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
