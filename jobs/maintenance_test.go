package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/api/idempotency"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// TestMaintenanceRunsOnRiverAsServerRole works a cleanup job through a real
// River client connected as pmapi_app: old expired sessions of every workspace on
// the shard go, recent ones stay.
func TestMaintenanceRunsOnRiverAsServerRole(t *testing.T) {
	ctx := context.Background()
	dir, shard := testdb.Directory(t)

	type seeded struct{ ws, stale, fresh uuid.UUID }
	var all []seeded
	for i := 0; i < 2; i++ {
		w := testdb.Workspace(t, dir, "cleanup", "")
		u, err := authz.CreateUser(ctx, shard, w.ID, "c@example.com", "C")
		if err != nil {
			t.Fatal(err)
		}
		_, s1, err := authz.IssueSession(ctx, shard, w.ID, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		_, s2, err := authz.IssueSession(ctx, shard, w.ID, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// Backdate the first session (expired eight days ago) and add an
		// Idempotency-Key record past its window beside a fresh one.
		err = shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx,
				"update sessions set expires_at = now() - interval '8 days' where workspace_id = $1 and id = $2",
				w.ID, s1.ID)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `insert into idempotency_keys (workspace_id, client_id, key, request_hash, created_at)
				values ($1, $2, 'old', '\x00', now() - interval '25 hours'), ($1, $2, 'fresh', '\x00', now())`,
				w.ID, w.ConsoleClientID)
			if err != nil {
				return err
			}
			// A device code two days past expiry and one still open.
			_, err = tx.Exec(
				ctx,
				`insert into oauth_device_codes (workspace_id, id, client_id, device_code_hash, user_code_hash, scopes, expires_at)
				values ($1, gen_random_uuid(), 'pm_cli_x', 'old', 'old', '{}', now() - interval '2 days'),
				       ($1, gen_random_uuid(), 'pm_cli_x', 'fresh', 'fresh', '{}', now() + interval '10 minutes')`,
				w.ID,
			)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, seeded{w.ID, s1.ID, s2.ID})
	}

	stale, fresh := []byte("stale-"+all[0].ws.String()), []byte("fresh-"+all[0].ws.String())
	_, err := dir.Pool().Exec(ctx, `insert into oauth_user_codes (user_code_hash, workspace_id, expires_at)
		values ($1, $2, now() - interval '2 days'), ($3, $2, now() + interval '10 minutes')`, stale, all[0].ws, fresh)
	if err != nil {
		t.Fatal(err)
	}

	clients, err := jobs.NewClients(dir, jobs.Options{Work: true, Sweeps: jobs.Sweeps{
		Workspace: []jobs.WorkspaceSweep{authz.SweepSessions, idempotency.Sweep, authz.SweepDeviceCodes},
		Directory: []jobs.DirectorySweep{authz.SweepUserCodes},
	}})
	if err != nil {
		t.Fatal(err)
	}
	client := clients.For("default")
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := clients.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer clients.Stop(ctx)
	if _, err := client.Insert(ctx, jobs.MaintenanceArgs{Shard: "default"}, nil); err != nil {
		t.Fatal(err)
	}
	waitForJob(t, events, "maintenance.sweep")
	for _, s := range all {
		ids := column[uuid.UUID](t, shard, s.ws, "select id from sessions where workspace_id = $1")
		if len(ids) != 1 || ids[0] != s.fresh {
			t.Errorf("workspace %s keeps sessions %v; want only the fresh %s (stale %s deleted)", s.ws, ids, s.fresh, s.stale)
		}
		keys := column[string](t, shard, s.ws, "select key from idempotency_keys where workspace_id = $1")
		if len(keys) != 1 || keys[0] != "fresh" {
			t.Errorf("workspace %s keeps idempotency keys %v; want only the fresh one", s.ws, keys)
		}
		codes := column[string](t, shard, s.ws,
			"select convert_from(device_code_hash, 'UTF8') from oauth_device_codes where workspace_id = $1")
		if len(codes) != 1 || codes[0] != "fresh" {
			t.Errorf("workspace %s keeps device codes %v; want only the open one", s.ws, codes)
		}
	}
	var userCodes []string
	rows, _ := dir.Pool().
		Query(ctx, "select convert_from(user_code_hash, 'UTF8') from oauth_user_codes where workspace_id = $1", all[0].ws)
	if userCodes, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(userCodes) != 1 ||
		!strings.HasPrefix(userCodes[0], "fresh-") {
		t.Errorf("user codes after the sweep: %v %v; want only the open one", userCodes, err)
	}
}
