// Package audit keeps each workspace's audit log: one entry per change to its
// credentials or configuration (apps, keys, webhook subscriptions, sessions,
// OAuth grants, quotas, the operator's actions), appended in the change's own
// transaction so that no change commits without its entry and no entry
// without its change. The server's role may append and read, never update or
// delete (migration 0024); an erasure removes a workspace's entries through
// their stream row, and the event retention drops whole days of the log
// (migration 0028, KeepPartitions; docs/decisions/audit-and-quotas.md).
package audit

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// IDPrefix starts an entry's id in the API.
const IDPrefix = "aud_"

// Actor types: who made a change.
const (
	ActorUser     = "user"
	ActorApp      = "app"
	ActorOperator = "operator"
)

// Actor is who made a change: a user by id, an app by client id, or the
// operator.
type Actor struct {
	Type string
	ID   string
}

// Origin is who made the changes of one request, and where from.
type Origin struct {
	Actor     Actor
	IP        string
	RequestID string
}

// system is the origin of changes made outside a request (the dev seed, a
// job): the operator's own process.
var system = Origin{Actor: Actor{Type: ActorOperator, ID: "system"}}

type originKey struct{}

// WithOrigin returns ctx carrying o: the API sets it once a request's
// credentials are known, and every change made under ctx is recorded as o's.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf is the origin ctx carries; outside a request, the operator's
// process ("system").
func OriginOf(ctx context.Context) Origin {
	if o, ok := ctx.Value(originKey{}).(Origin); ok {
		return o
	}
	return system
}

// Target is what a change happened to.
type Target struct {
	Type string
	ID   string
}

// Entry is one recorded change.
type Entry struct {
	ID        uuid.UUID
	At        time.Time
	Actor     Actor
	Action    string
	Target    Target
	IP        *string
	RequestID *string
}
