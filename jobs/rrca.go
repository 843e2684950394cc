package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
	"github.com/pmapi/pmapi/tenant"
)

// SimilarityArgs asks for one analysis's neighbours to be recomputed.
type SimilarityArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	RRCAID      uuid.UUID `json:"rrcaId"`
}

// Kind is the stable job kind.
func (SimilarityArgs) Kind() string { return "rrca.similarity" }

// InsertOpts debounces: while a recomputation for the analysis is queued or
// running, another request is absorbed by it (River unique jobs; running is
// a state River requires in ByState). A request absorbed by a running job is
// not lost: the job completes in the transaction that computed, after
// waiting for the analysis's row lock, which every change holds from before
// it queues its job until it commits (rrca.Store.RecomputeSimilar). So a
// change either committed before the job read the analysis, or queued its
// job after the running one was marked completed.
func (SimilarityArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateScheduled, rivertype.JobStateRetryable,
	}}}
}

// SuggestArgs asks for one suggestion run to be worked.
type SuggestArgs struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	RunID       uuid.UUID `json:"runId"`
}

// Kind is the stable job kind.
func (SuggestArgs) Kind() string { return "rrca.suggest" }

// InsertOpts gives suggestion runs a few tries before they are marked FAILED.
func (SuggestArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// Similarity queues a similarity recomputation in tx.
func (cs *Clients) Similarity(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, id uuid.UUID) error {
	_, err := cs.For(shard.Name).InsertTx(ctx, tx, SimilarityArgs{WorkspaceID: ws, RRCAID: id}, nil)
	return err
}

// Suggest queues a suggestion run in tx.
func (cs *Clients) Suggest(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, runID uuid.UUID) error {
	_, err := cs.For(shard.Name).InsertTx(ctx, tx, SuggestArgs{WorkspaceID: ws, RunID: runID}, nil)
	return err
}

// workspaceShard finds where a job's workspace lives; a workspace that is gone
// cancels the job.
func workspaceShard(ctx context.Context, dir *tenant.Directory, ws uuid.UUID) (*tenant.Shard, error) {
	w, err := dir.Get(ctx, ws)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return nil, river.JobCancel(fmt.Errorf("workspace %s no longer exists", ws))
	}
	if err != nil {
		return nil, err
	}
	return dir.ShardOf(w)
}

// SimilarityWorker recomputes an analysis's neighbours.
type SimilarityWorker struct {
	river.WorkerDefaults[SimilarityArgs]
	Directory *tenant.Directory
	Store     rrca.Store
}

// Timeout is River's own default, kept for a kind whose run grows with the
// workspace's analyses (the client's default is the webhook jobs' short one).
func (w *SimilarityWorker) Timeout(*river.Job[SimilarityArgs]) time.Duration { return time.Minute }

// Work recomputes the analysis's neighbours and completes the job in the
// same transaction (river.JobCompleteTx): River would otherwise mark it
// completed a moment after Work returns, and a change made in that moment
// would be dropped as a duplicate of a job that had already read the
// analysis. Outside a River client (a test calling Work) there is nothing to
// complete.
func (w *SimilarityWorker) Work(ctx context.Context, job *river.Job[SimilarityArgs]) error {
	shard, err := workspaceShard(ctx, w.Directory, job.Args.WorkspaceID)
	if err != nil {
		return err
	}
	var complete func(pgx.Tx) error
	if _, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		complete = func(tx pgx.Tx) error {
			_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
			return err
		}
	}
	err = w.Store.RecomputeSimilar(ctx, shard, job.Args.WorkspaceID, job.Args.RRCAID, complete)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return river.JobCancel(fmt.Errorf("analysis %s no longer exists", job.Args.RRCAID))
	}
	return err
}

// StaleSimilarity is how long a change may wait for its recomputation before
// the maintenance job queues it again: far beyond a job's normal wait, so
// only a lost or discarded job, or an analysis from before the profiles
// (migration 0019), is queued.
const StaleSimilarity = 10 * time.Minute

// similarityCatchUp is the maintenance job's sweep that queues again the
// similarity job of every analysis of the workspace still pending after
// StaleSimilarity (a duplicate of a queued job is dropped by River).
func (cs *Clients) similarityCatchUp(shard string, analyses rrca.Store) WorkspaceSweep {
	return func(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
		ids, err := analyses.Stale(ctx, tx, ws, StaleSimilarity)
		if err != nil || len(ids) == 0 {
			return err
		}
		params := make([]river.InsertManyParams, len(ids))
		for i, id := range ids {
			params[i] = river.InsertManyParams{Args: SimilarityArgs{WorkspaceID: ws, RRCAID: id}}
		}
		_, err = cs.For(shard).InsertManyTx(ctx, tx, params)
		return err
	}
}

// SuggestWorker works 5-why and look-across runs with the configured engine.
type SuggestWorker struct {
	river.WorkerDefaults[SuggestArgs]
	Directory *tenant.Directory
	Store     rrca.Store
	Engine    suggest.Engine
}

// Timeout is River's own default: an engine (a language model) may be slow.
func (w *SuggestWorker) Timeout(*river.Job[SuggestArgs]) time.Duration { return time.Minute }

// Work runs the engine; the last failed attempt marks the run FAILED.
func (w *SuggestWorker) Work(ctx context.Context, job *river.Job[SuggestArgs]) error {
	shard, err := workspaceShard(ctx, w.Directory, job.Args.WorkspaceID)
	if err != nil {
		return err
	}
	run, err := w.Store.RunInfo(ctx, shard, job.Args.WorkspaceID, job.Args.RunID)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return river.JobCancel(err)
	}
	if err != nil || run.Status != rrca.RunPending {
		return err
	}
	switch run.Kind {
	case rrca.RunFiveWhy:
		err = w.Store.RunFiveWhy(ctx, shard, job.Args.WorkspaceID, run, w.Engine)
	default:
		err = w.Store.RunLookAcross(ctx, shard, job.Args.WorkspaceID, run, w.Engine)
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		ferr := w.Store.FailRun(context.WithoutCancel(ctx), shard, job.Args.WorkspaceID, run.ID, err.Error())
		if ferr != nil {
			return ferr
		}
	}
	return err
}
