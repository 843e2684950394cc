package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// historyDeliveries is how many past deliveries, each with its attempt in
// its attempt log, the bench workspace holds before the scenarios.
const historyDeliveries = 20_000

// seedDeliveryHistory gives the workspace the webhook history a production
// workspace has (a month-old subscription, since disabled, with its delivered
// events, each attempt in its delivery's row as migration 0017 keeps it) and
// the statistics autovacuum would have gathered on it. Without it the deliver
// scenario starts on an empty, never-analyzed webhook_deliveries, and every
// connection caches the plans PostgreSQL makes for such a table: before 0017
// the attempts' foreign-key check into it walked the workspace's deliveries
// by a secondary index, one more index page for every 200 deliveries the
// phase wrote (docs/performance.md, "The foreign key check and the seeded history"), which a workspace with any
// history never runs. The bench measures a workspace in service, not the
// first minutes of a new installation. Rows go in as the superuser, past
// row-level security.
func (b *bench) seedDeliveryHistory(ctx context.Context) error {
	conn, ws, err := b.superuser(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	sub := uuid.New()
	month := time.Now().AddDate(0, -1, 0)
	if _, err := conn.Exec(ctx, `insert into webhook_subscriptions
		(workspace_id, id, client_id, url, events, status, secret_sealed,
		secret_prefix, disabled_reason, created_at, updated_at, disabled_at)
		values ($1, $2, $3, 'https://retired.example/hook', '{task.updated}', 'DISABLED', '\x00', 'whsec_old',
		'retired by the bench seed', $4, $4, $4)`, ws, sub, b.appID, month); err != nil {
		return fmt.Errorf("history subscription: %w", err)
	}
	deliveries := make([][]any, 0, historyDeliveries)
	for i := range historyDeliveries {
		at := month.Add(time.Duration(i) * time.Second)
		d, event := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		log := fmt.Sprintf(
			`[{"attempt":1,"at":%q,"outcome":"succeeded","statusCode":200,"latencyMs":3.5}]`,
			at.UTC().Format(time.RFC3339Nano),
		)
		deliveries = append(
			deliveries,
			[]any{ws, d, sub, b.appID, event, "task.updated", []byte(`{}`), "SUCCEEDED", 1, 200, at, at, at, []byte(log)},
		)
	}
	// The month's days get their partitions (the retention job makes only
	// the days ahead).
	if _, err := conn.Exec(ctx, "select pmapi_make_partitions($1, now())", month); err != nil {
		return fmt.Errorf("history partitions: %w", err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"webhook_deliveries"},
		[]string{
			"workspace_id", "id", "subscription_id", "client_id", "event_id", "event_type", "data", "status",
			"attempts", "last_status", "created_at", "completed_at", "occurred_at", "attempt_log",
		},
		pgx.CopyFromRows(deliveries)); err != nil {
		return fmt.Errorf("copy deliveries: %w", err)
	}
	_, err = conn.Exec(ctx, "vacuum analyze webhook_deliveries")
	return err
}
