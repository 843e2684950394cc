package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
)

// tables maps each kind the load writes to its table and id prefix.
var tables = map[string]struct{ table, prefix string }{
	"project": {"projects", "prj_"}, "task": {"tasks", "tsk_"}, "risk": {"risks", "rsk_"},
	"note": {"notes", "not_"}, "action-item": {"action_items", "act_"},
}

// counts is what the database and the receiver hold against what the API
// acknowledged. The database is read as its superuser, past row security.
type counts struct {
	Acked, AckedCreates, AckedUpdates int
	RowsFound, UpdatesFound           int // acked creates with their row; acked updates the row still carries
	EventsFound                       int // acked writes with their event
	Lost                              []string

	Events       int // events since the subscription
	DeliveryRows int // of those, with a delivery row
	Received     int // of those, received by the endpoint
	Dead         int
	Missing      []string // events never delivered
}

// delivery is an event with its delivery, if it has one.
type delivery struct {
	event, id uuid.UUID
	status    string
	hasRow    bool
}

// deliveries lists every event since the subscription with its delivery.
// The events table is an outbox: the fan-out deletes an event in the batch
// that writes its deliveries, so an event is either still there, without a
// delivery, or gone with its delivery row kept.
func (w *world) deliveries(ctx context.Context, conn *pgx.Conn) ([]delivery, error) {
	ws := uuid.MustParse(w.tenant.WorkspaceID)
	sub, err := pmapi.ParseID("whk_", w.subID, "subscription")
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `select e.id, null::uuid, null::text from events e
		where e.workspace_id = $1
			and e.occurred_at >= (select created_at from webhook_subscriptions where workspace_id = $1 and id = $2)
			and not exists (select 1 from webhook_deliveries d where d.workspace_id = $1 and d.subscription_id = $2
				and d.event_id = e.id and d.replay_of is null)
		union all
		select d.event_id, d.id, d.status from webhook_deliveries d
		where d.workspace_id = $1 and d.subscription_id = $2 and d.replay_of is null
		order by 1`, ws, sub)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (delivery, error) {
		var d delivery
		var id *uuid.UUID
		var status *string
		err := r.Scan(&d.event, &id, &status)
		if id != nil {
			d.id, d.status, d.hasRow = *id, *status, true
		}
		return d, err
	})
}

// undelivered counts events whose delivery has not reached the endpoint and
// whether any is DEAD (it never will).
func (w *world) undelivered(ctx context.Context) (left int, dead bool, err error) {
	conn, err := pgx.Connect(ctx, w.db.AdminURL)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close(ctx)
	ds, err := w.deliveries(ctx, conn)
	for _, d := range ds {
		if !d.hasRow || !w.rcv.has(pmapi.FormatID("evt_", d.id)) {
			left++
			dead = dead || d.status == "DEAD"
		}
	}
	return left, dead, err
}

// drain waits, at most bound from the load's end, until every event has
// reached the endpoint; it answers how long that took and whether it did.
func (w *world) drain(ctx context.Context, from time.Time, bound time.Duration) (time.Duration, bool) {
	for {
		left, dead, err := w.undelivered(ctx)
		if err == nil && left == 0 {
			return time.Since(from), true
		}
		if dead || ctx.Err() != nil || time.Since(from) > bound {
			return time.Since(from), false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// count holds the acknowledged writes against rows and events, and the events
// against what the endpoint received.
func (w *world) count(ctx context.Context, acks []ack) (counts, error) {
	var c counts
	conn, err := pgx.Connect(ctx, w.db.AdminURL)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	ws := uuid.MustParse(w.tenant.WorkspaceID)
	updated := map[uuid.UUID]time.Time{}
	for _, t := range tables {
		rows, err := conn.Query(ctx, "select id, updated_at from "+t.table+" where workspace_id = $1", ws)
		if err != nil {
			return c, err
		}
		var id uuid.UUID
		var at time.Time
		if _, err := pgx.ForEachRow(rows, []any{&id, &at}, func() error { updated[id] = at; return nil }); err != nil {
			return c, err
		}
	}
	// An event not yet fanned out is in the outbox; one fanned out is gone
	// from it and known by its deliveries (the subscription takes every type
	// and was made before the load).
	events := map[string]bool{}
	rows, err := conn.Query(
		ctx,
		`select type, data->>'id', coalesce(data->>'updatedAt', '') from events where workspace_id = $1
		union all
		select event_type, data->>'id', coalesce(data->>'updatedAt', '') from webhook_deliveries
		where workspace_id = $1 and replay_of is null`,
		ws,
	)
	if err != nil {
		return c, err
	}
	var typ, id, at string
	if _, err := pgx.ForEachRow(rows, []any{&typ, &id, &at}, func() error {
		events[eventKey(typ, id, at)] = true
		return nil
	}); err != nil {
		return c, err
	}
	for _, a := range acks {
		c.Acked++
		key, err := pmapi.ParseID(tables[a.Kind].prefix, a.ID, a.Kind)
		if err != nil {
			return c, fmt.Errorf("acknowledged %s %s: %w", a.Kind, a.ID, err)
		}
		at, ok := updated[key]
		if a.Op == "created" {
			c.AckedCreates++
			if ok {
				c.RowsFound++
			} else {
				c.Lost = append(c.Lost, fmt.Sprintf("%s %s acknowledged as created, no row", a.Kind, a.ID))
			}
		} else {
			c.AckedUpdates++
			// The row may have moved on since, never back.
			if ok && !at.Before(a.UpdatedAt.Truncate(time.Microsecond)) {
				c.UpdatesFound++
			} else {
				c.Lost = append(c.Lost, fmt.Sprintf("%s %s acknowledged as updated at %s, the row says %s",
					a.Kind, a.ID, a.UpdatedAt, at))
			}
		}
		stamp := a.UpdatedAt.Format(time.RFC3339Nano)
		if events[eventKey(a.Kind+"."+a.Op, a.ID, stamp)] {
			c.EventsFound++
		} else {
			c.Lost = append(c.Lost, fmt.Sprintf("%s %s (%s at %s): no %s.%s event", a.Kind, a.ID, a.Op, stamp, a.Kind, a.Op))
		}
	}
	ds, err := w.deliveries(ctx, conn)
	if err != nil {
		return c, err
	}
	for _, d := range ds {
		c.Events++
		if !d.hasRow {
			c.Missing = append(c.Missing, fmt.Sprintf("event %s has no delivery", d.event))
			continue
		}
		c.DeliveryRows++
		if d.status == "DEAD" {
			c.Dead++
		}
		deliveryID := pmapi.FormatID("evt_", d.id)
		if w.rcv.has(deliveryID) {
			c.Received++
		} else {
			c.Missing = append(c.Missing, fmt.Sprintf("delivery %s (event %s, %s) never arrived", deliveryID, d.event, d.status))
		}
	}
	return c, nil
}

// eventKey names an event by type, resource id and, for updates, the
// resource's updatedAt, which the event's view and the API's answer share.
func eventKey(typ, id, updatedAt string) string {
	if t, err := time.Parse(time.RFC3339Nano, updatedAt); err == nil && strings.HasSuffix(typ, ".updated") {
		return typ + " " + id + " " + t.UTC().Format(time.RFC3339Nano)
	}
	return typ + " " + id
}
