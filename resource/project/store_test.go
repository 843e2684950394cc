package project_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }

// failAfterEmit records the events for real, then fails: the change, its events
// and their jobs must all roll back together.
type failAfterEmit struct{ real event.Emitter }

var errLate = errors.New("failure after the event was written")

func (f failAfterEmit) Emit(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, events ...event.Event) error {
	if err := f.real.Emit(ctx, tx, shard, ws, events...); err != nil {
		return err
	}
	return errLate
}

func TestRolledBackChangeLeavesNoRowEventOrJob(t *testing.T) {
	ctx := context.Background()
	shard := tenant.NewShard("default", testdb.AppPool(t), testdb.TenantSetting(t))
	shards, _ := tenant.NewShards("default", shard)
	dir := tenant.NewDirectory(shards)
	clients, err := jobs.NewClients(dir, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dir.Create(ctx, "rollback", "")
	if err != nil {
		t.Fatal(err)
	}

	failing := project.Store{Events: failAfterEmit{clients}}
	if _, err := failing.Create(ctx, shard, w.ID, project.NewProject{Name: "doomed", RAGStatus: project.Green}); !errors.Is(err, errLate) {
		t.Fatalf("Create returned %v, want the late failure", err)
	}
	counts := func() (projects, events, jobsQueued int) {
		err := shard.Read(ctx, w.ID, func(b *pgx.Batch) {
			b.Queue("select count(*) from projects where workspace_id = $1", w.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&projects) })
			b.Queue("select count(*) from events where workspace_id = $1", w.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&events) })
			b.Queue("select count(*) from river.river_job where kind = 'event.fanout' and args->>'workspaceId' = $1", w.ID.String()).
				QueryRow(func(r pgx.Row) error { return r.Scan(&jobsQueued) })
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if p, e, j := counts(); p != 0 || e != 0 || j != 0 {
		t.Fatalf("after rollback: %d projects, %d events, %d jobs; want none", p, e, j)
	}

	working := project.Store{Events: clients}
	if _, err := working.Create(ctx, shard, w.ID, project.NewProject{Name: "kept", RAGStatus: project.Green}); err != nil {
		t.Fatal(err)
	}
	if p, e, j := counts(); p != 1 || e != 1 || j != 1 {
		t.Fatalf("after commit: %d projects, %d events, %d jobs; want one of each", p, e, j)
	}
}

func TestRules(t *testing.T) {
	if _, err := project.ValidName("  "); err == nil {
		t.Error("blank name accepted")
	}
	if n, err := project.ValidName(" a "); err != nil || n != "a" {
		t.Errorf("name not trimmed: %q %v", n, err)
	}
	if project.ValidRAG("ragStatus", "GREEN") != nil || project.ValidRAG("ragStatus", "green") == nil {
		t.Error("RAG validation")
	}
}
