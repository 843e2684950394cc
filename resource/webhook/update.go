package webhook

import (
	"context"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// Change is what an update of a subscription sets; what it leaves unset stays.
// The handler has checked every value already (the URL against the SSRF
// guard, the events against the catalogue).
type Change struct {
	URL    *string
	Events []string // nil: unchanged
	// SetProjects sets the project filter to Projects (nil: every project).
	SetProjects bool
	Projects    []uuid.UUID
	// SetRate sets the cap to MaxPerSecond (nil: no cap).
	SetRate      bool
	MaxPerSecond *int
}

// Update applies ch to one of the app's subscriptions, in the transaction that
// checks a new project filter against the workspace's projects and records
// the change in the audit log. The row is locked first so that an If-Match
// is compared with what the change would overwrite.
func (st Store) Update(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	ch Change,
) (Subscription, error) {
	sets := []string{"updated_at = now()"}
	args := []any{ws, clientID, id}
	set := func(column string, v any) {
		args = append(args, v)
		sets = append(sets, column+" = $"+strconv.Itoa(len(args)))
	}
	if ch.URL != nil {
		set("url", *ch.URL)
	}
	if ch.Events != nil {
		set("events", ch.Events)
	}
	if ch.SetProjects {
		set("project_ids", ch.Projects)
	}
	if ch.SetRate {
		set("max_per_second", ch.MaxPerSecond)
	}
	sql := "update webhook_subscriptions s set " + strings.Join(sets, ", ") +
		" where s.workspace_id = $1 and s.client_id = $2 and s.id = $3 returning " + subColumns
	var s Subscription
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		cur, err := lockSub(ctx, tx, ws, &clientID, id)
		if err != nil {
			return err
		}
		if err := api.IfMatch(ctx, id, ToView(cur)); err != nil {
			return err
		}
		if err := checkProjects(ctx, tx, ws, ch.Projects); err != nil {
			return err
		}
		if s, err = scanSub(tx.QueryRow(ctx, sql, args...)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.WebhookUpdated, subTarget(id))
	})
	return s, err
}
