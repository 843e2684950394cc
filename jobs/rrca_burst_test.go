package jobs_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/rrca/quality"
	"github.com/pmapi/pmapi/tenant"
)

// TestNoChangeLosesItsRecomputation is the property that every change to an
// analysis is followed by a recomputation that sees it: bursts of concurrent
// writes (nodes added and deleted, titles edited, analyses archived and
// restored) go to small workspaces while River's workers recompute, and
// after each burst, once no analysis is pending, every stored score equals
// what a forced recomputation of every analysis writes. Before the job
// completed in its own transaction, about one burst in a hundred left an
// analysis with stale scores and pending false: its change's job was dropped
// as a duplicate of a job River still had marked running after it had read
// the analysis.
func TestNoChangeLosesItsRecomputation(t *testing.T) {
	const (
		workspaces = 8
		bursts     = 1000 // in all, over the workspaces side by side
		analyses   = 5
	)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 40
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	dir, shard := testdb.DirectoryOver(t, pool)
	clients, err := jobs.NewClients(dir, jobs.Options{Work: true, Workers: 8, PollInterval: 20 * time.Millisecond})
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
	store := rrca.Store{Events: clients, Jobs: clients, ActionItems: actionitem.Store{Events: clients}}
	ds, err := quality.Load()
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range workspaces {
		wg.Go(func() {
			b := burster{t: t, store: store, shard: shard, ds: ds, rng: rand.New(rand.NewPCG(uint64(i), 7))}
			if err := b.run(ctx, dir, fmt.Sprintf("bursts %d", i), analyses, bursts/workspaces); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
}

// burster writes bursts into one workspace and checks each.
type burster struct {
	t     *testing.T
	store rrca.Store
	shard *tenant.Shard
	ds    quality.Dataset
	rng   *rand.Rand
	ws    uuid.UUID
	ids   []uuid.UUID
}

func (b *burster) text() string {
	a := b.ds.Analyses[b.rng.IntN(len(b.ds.Analyses))]
	if len(a.Nodes) == 0 {
		return a.Title
	}
	return a.Nodes[b.rng.IntN(len(a.Nodes))].Text
}

func (b *burster) run(ctx context.Context, dir *tenant.Directory, name string, analyses, bursts int) error {
	w, err := dir.Create(ctx, name, "")
	if err != nil {
		return err
	}
	b.ws = w.ID
	for range analyses {
		problem := b.text()
		a, err := b.store.Create(ctx, b.shard, b.ws, rrca.NewAnalysis{Title: b.text(), ProblemStatement: &problem})
		if err != nil {
			return err
		}
		b.ids = append(b.ids, a.ID)
	}
	for i := range bursts {
		if err := b.burst(ctx); err != nil {
			return fmt.Errorf("%s, burst %d: %w", name, i, err)
		}
		if err := b.check(ctx); err != nil {
			return fmt.Errorf("%s, burst %d: %w", name, i, err)
		}
	}
	return nil
}

// burst makes two to four changes at once, to analyses picked at random.
func (b *burster) burst(ctx context.Context) error {
	n := 2 + b.rng.IntN(3)
	type change struct {
		id   uuid.UUID
		kind int
		text string
	}
	changes := make([]change, n)
	for i := range changes {
		changes[i] = change{b.ids[b.rng.IntN(len(b.ids))], b.rng.IntN(10), b.text()}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range changes {
		wg.Go(func() {
			var err error
			switch {
			case c.kind < 5:
				kind := rrca.KindWhy
				if c.kind == 0 {
					kind = rrca.KindRootCause
				}
				_, err = b.store.AddNode(ctx, b.shard, b.ws, c.id, kind, c.text, nil)
			case c.kind < 7:
				err = b.deleteNode(ctx, c.id)
			case c.kind < 9:
				_, err = b.store.Update(ctx, b.shard, b.ws, c.id, &c.text, nil)
			default:
				a, gerr := b.store.SetArchived(ctx, b.shard, b.ws, c.id, true)
				if gerr == nil && a.ArchivedAt != nil {
					_, err = b.store.SetArchived(ctx, b.shard, b.ws, c.id, false)
				} else {
					err = gerr
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *burster) deleteNode(ctx context.Context, id uuid.UUID) error {
	nodes, err := b.store.Nodes(ctx, b.shard, b.ws, id, "")
	if err != nil || len(nodes) == 0 {
		return err
	}
	_, err = b.store.DeleteNode(ctx, b.shard, b.ws, id, nodes[b.rng.IntN(len(nodes))].ID)
	// A node another change of the burst deleted is gone already.
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return nil
	}
	return err
}

// check waits until no analysis is pending, then compares every stored pair
// with what forced recomputations of every analysis write.
func (b *burster) check(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		err := b.shard.Read(ctx, b.ws, func(batch *pgx.Batch) {
			batch.Queue(`select count(*) from rrca_analyses a left join rrca_similarity s
				on s.workspace_id = a.workspace_id and s.rrca_id = a.id and s.workspace_id = $1
				where a.workspace_id = $1 and a.similarity_version > coalesce(s.version, 0)`, b.ws).
				QueryRow(func(r pgx.Row) error { return r.Scan(&pending) })
		})
		if err != nil {
			return err
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d analyses still pending after 30 s", pending)
		}
		time.Sleep(2 * time.Millisecond)
	}
	// What the API answers agrees.
	for _, id := range b.ids {
		if l, err := b.store.Similar(ctx, b.shard, b.ws, id, 1); err != nil || l.Pending || l.ComputedAt == nil {
			return fmt.Errorf("analysis %s: %+v, %v; want computed, not pending", id, l, err)
		}
	}
	stored, err := b.pairs(ctx)
	if err != nil {
		return err
	}
	for _, id := range b.ids {
		if err := b.store.RecomputeSimilar(ctx, b.shard, b.ws, id, nil); err != nil {
			return err
		}
	}
	forced, err := b.pairs(ctx)
	if err != nil {
		return err
	}
	for k, want := range forced {
		if got, ok := stored[k]; !ok || math.Abs(got-want) > 1e-12 {
			return fmt.Errorf("pair %v: stored %v (present %v), a forced recomputation writes %v", k, got, ok, want)
		}
	}
	for k, got := range stored {
		if _, ok := forced[k]; !ok {
			return fmt.Errorf("pair %v: stored %v, a forced recomputation writes none", k, got)
		}
	}
	return nil
}

func (b *burster) pairs(ctx context.Context) (map[[2]uuid.UUID]float64, error) {
	out := map[[2]uuid.UUID]float64{}
	err := b.shard.Read(ctx, b.ws, func(batch *pgx.Batch) {
		q := batch.Queue("select rrca_id, similar_id, score from rrca_similar where workspace_id = $1", b.ws)
		q.Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var a, s uuid.UUID
				var score float64
				if err := rows.Scan(&a, &s, &score); err != nil {
					return err
				}
				// A pair is one row, under either analysis: the key is
				// the pair in order, and a pair stored twice is a fault.
				k := [2]uuid.UUID{a, s}
				if a.String() > s.String() {
					k = [2]uuid.UUID{s, a}
				}
				if _, dup := out[k]; dup {
					return fmt.Errorf("pair %v stored twice", k)
				}
				out[k] = score
			}
			return rows.Err()
		})
	})
	return out, err
}
