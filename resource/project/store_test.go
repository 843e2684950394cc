package project_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/storetest"
	"github.com/pmapi/pmapi/resource/project"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestRolledBackChangeLeavesNoRowEventOrJob(t *testing.T) {
	ctx := context.Background()
	f := storetest.New(t, "rollback")
	failing := project.Store{Events: storetest.FailAfterEmit{Real: f.Events}}
	doomed := project.NewProject{Settings: project.Settings{Name: "doomed", RAGStatus: project.Green}}
	if _, err := failing.Create(ctx, f.Shard, f.WS, doomed); !errors.Is(err, storetest.ErrLate) {
		t.Fatalf("Create returned %v, want the late failure", err)
	}
	counts := func() (projects, events, jobsQueued int) {
		events, jobsQueued = f.Written(t, func(b *pgx.Batch) {
			b.Queue("select count(*) from projects where workspace_id = $1", f.WS).
				QueryRow(func(r pgx.Row) error { return r.Scan(&projects) })
		})
		return projects, events, jobsQueued
	}
	if p, e, j := counts(); p != 0 || e != 0 || j != 0 {
		t.Fatalf("after rollback: %d projects, %d events, %d jobs; want none", p, e, j)
	}

	working := project.Store{Events: f.Events}
	kept := project.NewProject{Settings: project.Settings{Name: "kept", RAGStatus: project.Green}}
	if _, err := working.Create(ctx, f.Shard, f.WS, kept); err != nil {
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
