package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/pmapi/pmapi"
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
// analyses write the same pair (the score is symmetric; whichever runs
// deletes the pair's row and writes it again). Run side by side, as workers
// run them, every one succeeds: they take turns on the workspace's lock, not
// left to collide on rrca_similar_pkey and River's retry (before, about a
// third of these failed).
func TestSimilarityJobsOfSimilarAnalysesNeverCollide(t *testing.T) {
	ctx := context.Background()
	_, shard, w, store := analysesWorkspace(t)
	problem := "Hydraulic seal leaks on press line after the nightly cleaning cycle"
	var ids []uuid.UUID
	for _, press := range []int{4, 7, 9, 2, 5, 1} {
		title := fmt.Sprintf("Seal leak on press %d", press)
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

// TestMaintenanceQueuesAnalysesLeftPending: an analysis whose change has
// waited past StaleSimilarity with no job (one lost, or from before the
// profiles) is queued again by the maintenance job, which runs when the
// workers start, and computed.
func TestMaintenanceQueuesAnalysesLeftPending(t *testing.T) {
	ctx := context.Background()
	dir, shard, w, store := analysesWorkspace(t)
	a, err := store.Create(ctx, shard, w.ID, rrca.NewAnalysis{Title: "Seal leak on press 4"})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := store.Create(ctx, shard, w.ID, rrca.NewAnalysis{Title: "Seal leak on press 7"})
	if err != nil {
		t.Fatal(err)
	}
	if err := shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `update rrca_analyses set updated_at = now() - interval '11 minutes'
			where workspace_id = $1 and id = $2`, w.ID, a.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	clients, err := jobs.NewClients(dir, jobs.Options{Work: true, Workers: 2, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := clients.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = clients.Stop(stop)
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := store.Similar(ctx, shard, w.ID, a.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Pending && l.ComputedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stale analysis is still pending: %+v", l)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The fresh one's change is recent: its own job is due, not the sweep's.
	if l, err := store.Similar(ctx, shard, w.ID, fresh.ID, 5); err != nil || !l.Pending {
		t.Errorf("the fresh analysis: %+v, %v; want it left to its own job (still pending)", l, err)
	}
}

// TestAPairStoredInBothDirectionsIsListedOnce: a pair is one row now, and
// pairs written in both directions before are still listed once, until a
// recomputation of either analysis replaces them with one row.
func TestAPairStoredInBothDirectionsIsListedOnce(t *testing.T) {
	ctx := context.Background()
	_, shard, w, store := analysesWorkspace(t)
	problem := "Hydraulic seal leaks on press line after the nightly cleaning cycle"
	var ids []uuid.UUID
	for _, title := range []string{"Seal leak on press 4", "Seal leak on press 7"} {
		a, err := store.Create(ctx, shard, w.ID, rrca.NewAnalysis{Title: title, ProblemStatement: &problem})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	rows := func() (n int) {
		t.Helper()
		if err := shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "select count(*) from rrca_similar where workspace_id = $1", w.ID).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	listed := func(when string) {
		t.Helper()
		for i, id := range ids {
			l, err := store.Similar(ctx, shard, w.ID, id, 10)
			if err != nil || len(l.Items) != 1 || l.Items[0].RRCAID != pmapi.FormatID(rrca.IDPrefix, ids[1-i]) {
				t.Fatalf("%s, analysis %d lists %+v, %v; want the other once", when, i, l.Items, err)
			}
		}
	}
	// The first finds no profile of the second yet; the second finds the
	// first's and writes the pair.
	for _, id := range ids {
		if err := store.RecomputeSimilar(ctx, shard, w.ID, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := rows(); n != 1 {
		t.Fatalf("%d rows for one pair", n)
	}
	listed("one row")
	if err := shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `insert into rrca_similar (workspace_id, rrca_id, similar_id, score, computed_at)
			select workspace_id, similar_id, rrca_id, score, computed_at from rrca_similar where workspace_id = $1`, w.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	listed("both directions")
	if err := store.RecomputeSimilar(ctx, shard, w.ID, ids[0], nil); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 1 {
		t.Fatalf("after a recomputation, %d rows for one pair", n)
	}
	listed("recomputed")
}
