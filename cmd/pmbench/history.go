package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// historyDeliveries is how many past deliveries, each with its attempt, the
// bench workspace holds before the scenarios.
const historyDeliveries = 20_000

// seedDeliveryHistory gives the workspace the webhook history a production
// workspace has (a month-old subscription, since disabled, with its delivered
// events) and the statistics autovacuum would have gathered on it. Without it
// the deliver scenario starts on empty, never-analyzed delivery tables, and
// every connection caches the plan PostgreSQL makes for such a table for the
// attempts' foreign-key check: a walk of the workspace's deliveries by a
// secondary index, one more index page for every 200 deliveries the phase
// writes (README, "the foreign key's check"), which a workspace with any
// history never runs. Rows go in as the superuser, past row-level security.
func (b *bench) seedDeliveryHistory(ctx context.Context) error {
	conn, ws, err := b.superuser(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	sub := uuid.New()
	month := time.Now().AddDate(0, -1, 0)
	if _, err := conn.Exec(ctx, `insert into webhook_subscriptions (workspace_id, id, client_id, url, events, status, secret_sealed,
		secret_prefix, disabled_reason, created_at, updated_at, disabled_at)
		values ($1, $2, $3, 'https://retired.example/hook', '{task.updated}', 'DISABLED', '\x00', 'whsec_old', 'retired by the bench seed',
		$4, $4, $4)`, ws, sub, b.appID, month); err != nil {
		return fmt.Errorf("history subscription: %w", err)
	}
	deliveries := make([][]any, 0, historyDeliveries)
	attempts := make([][]any, 0, historyDeliveries)
	for i := range historyDeliveries {
		at := month.Add(time.Duration(i) * time.Second)
		d, event := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		deliveries = append(deliveries, []any{ws, d, sub, b.appID, event, "task.updated", []byte(`{}`), "SUCCEEDED", 1, 200, at, at})
		attempts = append(attempts, []any{ws, uuid.Must(uuid.NewV7()), d, 1, at, "succeeded", 200, 3.5})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"webhook_deliveries"},
		[]string{"workspace_id", "id", "subscription_id", "client_id", "event_id", "event_type", "data", "status", "attempts", "last_status", "created_at", "completed_at"},
		pgx.CopyFromRows(deliveries)); err != nil {
		return fmt.Errorf("copy deliveries: %w", err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"webhook_attempts"},
		[]string{"workspace_id", "id", "delivery_id", "attempt", "at", "outcome", "status_code", "latency_ms"},
		pgx.CopyFromRows(attempts)); err != nil {
		return fmt.Errorf("copy attempts: %w", err)
	}
	_, err = conn.Exec(ctx, "vacuum analyze webhook_deliveries, webhook_attempts")
	return err
}
