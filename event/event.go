// Package event is the vocabulary of change events: what a resource store emits
// inside its transaction and what the fan-out delivers to webhooks.
package event

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// Event is one change: its type (`<resource>.<verb>`) and its payload, which is
// the `data` of the webhook body.
type Event struct {
	Type string
	Data any
}

// Emitter records events inside the transaction of the change that caused them:
// the event row and its fan-out job commit or roll back with the change.
type Emitter interface {
	Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...Event) error
}

// Type documents one event type.
type Type struct {
	Name        string
	Description string
	// Payload is a value of the Go type of Event.Data, for the OpenAPI document.
	Payload any
}

// Discard is an Emitter that records nothing, for code paths (and tests) that
// must not emit.
type Discard struct{}

// Emit does nothing.
func (Discard) Emit(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, ...Event) error { return nil }
