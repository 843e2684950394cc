package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/tenant"
)

type noRRCAJobs struct{}

func (noRRCAJobs) Similarity(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error {
	return nil
}
func (noRRCAJobs) Suggest(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error {
	return nil
}

// analysesWorkspace is a new workspace of the test database's directory and
// an analysis store that emits and queues nothing.
func analysesWorkspace(t *testing.T) (*tenant.Directory, *tenant.Shard, tenant.Workspace, rrca.Store) {
	t.Helper()
	dir, shard := testdb.Directory(t)
	w, err := dir.Create(context.Background(), "analyses", "")
	if err != nil {
		t.Fatal(err)
	}
	return dir, shard, w, rrca.Store{Events: event.Discard{}, Jobs: noRRCAJobs{}}
}

// TestSimilarityJobsOfSimilarAnalysesNeverCollide: the jobs of two similar
// analyses write the same pair of rows (the score is symmetric, each writes
// both directions). Run side by side, as workers run them, every one
// succeeds: the rows are upserted, not left to collide on rrca_similar_pkey
// and River's retry (before the upsert about a third of these failed).
func TestSimilarityJobsOfSimilarAnalysesNeverCollide(t *testing.T) {
	ctx := context.Background()
	_, shard, w, store := analysesWorkspace(t)
	problem := "Hydraulic seal leaks on press line after the nightly cleaning cycle"
	var ids []uuid.UUID
	for _, title := range []string{"Seal leak on press 4", "Seal leak on press 7", "Seal leak on press 9", "Seal leak on press 2", "Seal leak on press 5", "Seal leak on press 1"} {
		a, err := store.Create(ctx, shard, w.ID, rrca.NewAnalysis{Title: title, ProblemStatement: &problem})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	failures := 0
	for range 30 {
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for i, id := range ids {
			wg.Go(func() { errs[i] = store.RecomputeSimilar(ctx, shard, w.ID, id, nil) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				failures++
				t.Log(err)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d recomputations failed", failures, 30*len(ids))
	}
}

// TestTheSimilarityJobOfAGoneAnalysisIsCancelled: the worker computes an
// analysis that exists, and cancels (never retries) the job of one that does
// not, without reading rrca's table itself (rrca.Store.UpdatedAt).
func TestTheSimilarityJobOfAGoneAnalysisIsCancelled(t *testing.T) {
	ctx := context.Background()
	dir, shard, w, store := analysesWorkspace(t)
	a, err := store.Create(ctx, shard, w.ID, rrca.NewAnalysis{Title: "Seal leak on press 4"})
	if err != nil {
		t.Fatal(err)
	}
	worker := &jobs.SimilarityWorker{Directory: dir, Store: store}
	run := func(id uuid.UUID) error {
		return worker.Work(ctx, &river.Job[jobs.SimilarityArgs]{Args: jobs.SimilarityArgs{WorkspaceID: w.ID, RRCAID: id}})
	}
	if err := run(a.ID); err != nil {
		t.Errorf("the job of an existing analysis: %v", err)
	}
	var cancel *river.JobCancelError
	if err := run(uuid.New()); !errors.As(err, &cancel) {
		t.Errorf("the job of a gone analysis returned %v, want a JobCancel", err)
	}
}
