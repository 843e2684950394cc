package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/pmapi/pmapi/internal/tick"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// Clients holds one River client per shard: a workspace's jobs live beside its
// rows, so they commit in the same transaction. On a Citus shard that routes
// workspaces to their nodes (tenant.Shard.Route) River's tables are on every
// node, a job lands on the node whose transaction queued it, and a working
// process runs a client on each worker node besides the shard's own.
type Clients struct {
	// byShard are the shards' own clients (the coordinator's on Citus): they
	// insert in any transaction, run the periodic jobs and serve River UI.
	byShard  map[string]*river.Client[pgx.Tx]
	working  bool
	schedule []time.Duration
	// newClient builds a client of shard over pool, with the periodic jobs
	// when periodic.
	newClient func(shard *tenant.Shard, pool *pgxpool.Pool, periodic bool) (*river.Client[pgx.Tx], error)
	shards    []*tenant.Shard
	log       *slog.Logger

	mu sync.Mutex
	// onNodes are the working clients of routed shards' worker nodes, by
	// shard name and node address.
	onNodes map[string]map[string]nodeClient
	// stopWatch ends the watch for new nodes; watched is closed when it has.
	stopWatch context.CancelFunc
	watched   chan struct{}
}

// nodeClient is a working River client on one Citus node: the node's pool it
// was made for (a new pool means the node moved: a new client), and River's
// own pool on the node (riverPool).
type nodeClient struct {
	client *river.Client[pgx.Tx]
	pool   *pgxpool.Pool
	own    *pgxpool.Pool
}

// riverPoolConns bounds River's own pool on a node: its notifier's listening
// connection, the fetches and completions, the leader and the maintenance
// services; the jobs' transactions go through the shard's routed pools.
const riverPoolConns = 8

// riverPool is River's own pool on a routed node: the node pool's
// configuration without the forced custom plans of Citus releases whose
// local plan cache leaks (tenant.PlanCache). River's statements are on
// River's local tables, where Citus caches nothing, and re-planning its fetch
// on every call would cost the node more than the statement.
func riverPool(node *pgxpool.Pool) (*pgxpool.Pool, error) {
	cfg := node.Config().Copy()
	delete(cfg.ConnConfig.RuntimeParams, "plan_cache_mode")
	cfg.MaxConns, cfg.MinConns = min(cfg.MaxConns, riverPoolConns), 0
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// Options shape the River clients.
type Options struct {
	// Work makes the clients fetch and run jobs; false gives insert-only clients
	// (the API process of a split deployment).
	Work bool
	Log  *slog.Logger
	// RiverLog receives River's own lines (client started, producer counts);
	// nil sends them to Log. pmapi dev lowers them to debug.
	RiverLog *slog.Logger
	// Workers is how many jobs one process runs at once per shard.
	Workers int
	// Engine makes 5-why and look-across suggestions; nil is the deterministic one.
	Engine suggest.Engine
	// RRCASources are the other resources' rows suggestion runs read
	// (cmd/pmapi passes resource/registry.RRCASources); without them every
	// run fails, saying so.
	RRCASources rrca.Sources
	// Box opens webhook signing secrets (required to deliver webhooks).
	Box *seal.Box
	// Sender posts deliveries; nil builds the production one (no loopback).
	Sender *webhook.Sender
	// Schedule overrides the delivery retry schedule (tests shrink it).
	Schedule []time.Duration
	// RescueAfter overrides how long a running job may go silent before River
	// hands it to another worker (DefaultRescueAfter when zero). A kind with a
	// longer Timeout of its own is rescued after that instead.
	RescueAfter time.Duration
	// Breaker configures the subscriptions' circuit breaker
	// (webhook.DefaultBreaker when its Failures is zero).
	Breaker webhook.Breaker
	// CompletedRetention is how long finished jobs stay in river_job
	// (DefaultCompletedRetention when zero).
	CompletedRetention time.Duration
	// PollInterval overrides how often an idle worker looks for due jobs.
	PollInterval time.Duration
	// FetchCooldown overrides the least time between two fetches of a busy
	// worker (DefaultFetchCooldown when zero). With Workers it bounds how many jobs a
	// process starts a second: a webhook delivery takes two jobs (its
	// transaction's fan-out and the delivery).
	FetchCooldown time.Duration
	// Sweeps are what the maintenance job deletes (cmd/pmapi names every
	// owner's); none leaves the job with nothing to do.
	Sweeps Sweeps
	// SweepEvery and SweepAfter override how often the sweeper looks for events
	// that lost their fan-out job, and how old such an event must be
	// (DefaultSweepEvery, DefaultSweepAfter when zero; tests shrink them).
	SweepEvery, SweepAfter time.Duration
	// EventRetention is how long events, deliveries and attempts are kept
	// (webhook.DefaultEventRetention when zero), and the audit log with them.
	EventRetention time.Duration
}

func (o Options) engine() suggest.Engine {
	if o.Engine == nil {
		return suggest.Deterministic{}
	}
	return o.Engine
}

// DefaultFetchCooldown is a tenth of River's 100 ms: a busy process starts at
// most Workers jobs per cooldown, and River's default held 20 workers to 200
// jobs (100 webhook deliveries) a second while they sat mostly idle. Idle
// workers are unaffected: they fetch on insert notifications and the poll.
const DefaultFetchCooldown = 10 * time.Millisecond

// DefaultCompletedRetention keeps completed jobs an hour, not River's day: a
// webhook takes a job per writing transaction, and at a thousand a second a
// day's worth would be 86 million rows the fetch and insert indexes carry.
const DefaultCompletedRetention = time.Hour

// NewClients builds a client per shard with every worker pmapi has.
func NewClients(dir *tenant.Directory, opts Options) (*Clients, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Workers <= 0 {
		opts.Workers = 20
	}
	if opts.Schedule == nil {
		opts.Schedule = Schedule
	}
	if opts.FetchCooldown <= 0 {
		opts.FetchCooldown = DefaultFetchCooldown
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = DefaultSweepEvery
	}
	if opts.SweepAfter <= 0 {
		opts.SweepAfter = DefaultSweepAfter
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = DefaultRescueAfter
	}
	if opts.EventRetention == 0 {
		opts.EventRetention = webhook.DefaultEventRetention
	}
	if err := webhook.CheckEventRetention(opts.EventRetention); err != nil {
		return nil, err
	}
	if opts.CompletedRetention <= 0 {
		opts.CompletedRetention = DefaultCompletedRetention
	}
	if opts.Sender == nil {
		sender, err := webhook.NewSender(false, "")
		if err != nil {
			return nil, err
		}
		opts.Sender = sender
	}
	cs := &Clients{byShard: map[string]*river.Client[pgx.Tx]{}, working: opts.Work, schedule: opts.Schedule,
		shards: dir.Shards().All(), log: opts.Log, onNodes: map[string]map[string]nodeClient{}}
	hooks := webhook.Store{Events: cs, Jobs: cs, Box: opts.Box, Breaker: opts.Breaker}
	cs.newClient = func(shard *tenant.Shard, pool *pgxpool.Pool, periodic bool) (*river.Client[pgx.Tx], error) {
		workers := river.NewWorkers()
		analyses := rrca.Store{Events: cs, Jobs: cs, ActionItems: actionitem.Store{Events: cs},
			Sources: opts.RRCASources}
		sweeps := opts.Sweeps
		sweeps.Workspace = append(slices.Clip(sweeps.Workspace), cs.similarityCatchUp(shard.Name, analyses))
		river.AddWorker(workers, &MaintenanceWorker{Directory: dir, Sweeps: sweeps})
		// A job's transactions run where its workspace lives now (the shard,
		// and on Citus the node that holds it), whichever node's River
		// tables the job waited in.
		deliverer := Deliverer{Shard: shard, Webhooks: hooks, Sender: opts.Sender, Schedule: opts.Schedule}
		river.AddWorker(workers, &FanoutWorker{Deliverer: deliverer})
		river.AddWorker(workers, &RetryWorker{Deliverer: deliverer})
		river.AddWorker(workers, &DeliverWorker{Shard: shard, Webhooks: hooks})
		river.AddWorker(
			workers,
			&SweepWorker{Directory: dir, Clients: cs, Webhooks: hooks, After: opts.SweepAfter, Log: opts.Log},
		)
		river.AddWorker(workers, &SimilarityWorker{Directory: dir, Store: analyses})
		river.AddWorker(workers, &SuggestWorker{Directory: dir, Store: analyses, Engine: opts.engine()})
		river.AddWorker(workers, &workspacedata.EraseWorker{Directory: dir})
		river.AddWorker(workers, &RetentionWorker{Directory: dir, Retention: opts.EventRetention, Log: opts.Log})
		cfg := &river.Config{
			Schema:     migrations.RiverSchema,
			Logger:     cmp.Or(opts.RiverLog, opts.Log),
			Workers:    workers,
			Middleware: []rivertype.Middleware{&jobMetrics{log: opts.Log}},
			// River's rescuer leaves a kind alone until its own Timeout has
			// passed, so the jobs that outlast the webhook ones (maintenance,
			// sweep, RRCA) are safe from a short rescue; the default job
			// timeout must fit inside it.
			ReindexerIndexNames:         reindexed(),
			RescueStuckJobsAfter:        opts.RescueAfter,
			JobTimeout:                  min(DeliveryJobTimeout, opts.RescueAfter),
			CompletedJobRetentionPeriod: opts.CompletedRetention,
		}
		cfg.FetchCooldown, cfg.FetchPollInterval = opts.FetchCooldown, river.FetchPollIntervalDefault
		if opts.PollInterval > 0 {
			cfg.FetchPollInterval = opts.PollInterval
		}
		// River wants the idle poll no shorter than the cooldown.
		cfg.FetchPollInterval = max(cfg.FetchPollInterval, cfg.FetchCooldown)
		if opts.Work {
			cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Workers}}
		}
		if opts.Work && periodic {
			shardName := shard.Name
			cfg.PeriodicJobs = []*river.PeriodicJob{
				river.NewPeriodicJob(
					river.PeriodicInterval(6*time.Hour),
					func() (river.JobArgs, *river.InsertOpts) { return MaintenanceArgs{Shard: shardName}, nil },
					&river.PeriodicJobOpts{RunOnStart: true},
				),
				river.NewPeriodicJob(
					river.PeriodicInterval(RetentionEvery),
					func() (river.JobArgs, *river.InsertOpts) { return RetentionArgs{Shard: shardName}, nil },
					&river.PeriodicJobOpts{RunOnStart: true},
				),
				river.NewPeriodicJob(
					river.PeriodicInterval(opts.SweepEvery),
					func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{Shard: shardName}, nil },
					nil,
				),
			}
		}
		return river.NewClient(riverpgxv5.New(pool), cfg)
	}
	for _, shard := range cs.shards {
		client, err := cs.newClient(shard, shard.Pool, true)
		if err != nil {
			return nil, err
		}
		cs.byShard[shard.Name] = client
	}
	if opts.Work {
		if _, _, err := cs.addNodes(); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// reindexed is River's list of indexes to rebuild nightly less those pmapi's
// migrations drop (migrations.RiverIndexesDropped).
func reindexed() []string {
	dropped := migrations.RiverIndexesDropped()
	var out []string
	for _, name := range river.ReindexerIndexNamesDefault() {
		if !slices.Contains(dropped, name) {
			out = append(out, name)
		}
	}
	return out
}

// For returns the client of shard.
func (cs *Clients) For(shard string) *river.Client[pgx.Tx] { return cs.byShard[shard] }

// Start begins working jobs on every shard, and on every worker node of a
// routed shard; insert-only clients need no start. A node the shard finds
// later (a worker added to the cluster and migrated) gets its client within
// nodeWatchEvery.
func (cs *Clients) Start(ctx context.Context) error {
	if !cs.working {
		return nil
	}
	for name := range cs.byShard {
		for _, c := range cs.all(name) {
			if err := c.Start(ctx); err != nil {
				return err
			}
		}
	}
	watch, stop := context.WithCancel(ctx)
	cs.stopWatch, cs.watched = stop, make(chan struct{})
	go func() {
		defer close(cs.watched)
		tick.Every(watch, nodeWatchEvery, func() {
			if err := cs.startNewNodes(watch); err != nil && watch.Err() == nil {
				cs.log.Warn("starting River on a Citus node", "error", err.Error())
			}
		})
	}()
	return nil
}

// nodeWatchEvery is how often a working process looks for a routed shard's
// new nodes.
const nodeWatchEvery = 10 * time.Second

// addNodes builds a working client for every worker node of each routed
// shard that has none, or whose node pool changed (the node moved), and
// returns them with the clients they replace.
func (cs *Clients) addNodes() (added []*river.Client[pgx.Tx], replaced []nodeClient, err error) {
	var errs []error
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, shard := range cs.shards {
		for _, n := range shard.Nodes() {
			if n.Group == 0 {
				continue // the coordinator: the shard's own client works its jobs
			}
			old, ok := cs.onNodes[shard.Name][n.Addr]
			if ok && old.pool == n.Pool {
				continue
			}
			own, err := riverPool(n.Pool)
			if err != nil {
				errs = append(errs, fmt.Errorf("shard %s, node %s: %w", shard.Name, n.Addr, err))
				continue
			}
			client, err := cs.newClient(shard, own, false)
			if err != nil {
				own.Close()
				errs = append(errs, fmt.Errorf("shard %s, node %s: %w", shard.Name, n.Addr, err))
				continue
			}
			if ok {
				replaced = append(replaced, old)
			}
			if cs.onNodes[shard.Name] == nil {
				cs.onNodes[shard.Name] = map[string]nodeClient{}
			}
			cs.onNodes[shard.Name][n.Addr] = nodeClient{client: client, pool: n.Pool, own: own}
			added = append(added, client)
		}
	}
	return added, replaced, errors.Join(errs...)
}

// startNewNodes starts clients for the nodes found since the last look,
// stopping those of nodes that moved.
func (cs *Clients) startNewNodes(ctx context.Context) error {
	added, replaced, err := cs.addNodes()
	for _, nc := range replaced {
		_ = stopClient(ctx, nc.client)
		nc.own.Close()
	}
	for _, c := range added {
		err = errors.Join(err, c.Start(ctx))
	}
	return err
}

// Subscribe delivers the events of kinds from every client of every shard
// (River's Client.Subscribe), for tests that wait for a job wherever it
// landed; cancel ends it. A client started later is not included.
func (cs *Clients) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	out := make(chan *river.Event, 1000)
	done := make(chan struct{})
	var cancels []func()
	var wg sync.WaitGroup
	for name := range cs.byShard {
		for _, c := range cs.all(name) {
			events, cancel := c.Subscribe(kinds...)
			cancels = append(cancels, cancel)
			wg.Go(func() {
				for {
					select {
					case ev, ok := <-events:
						if !ok {
							return
						}
						select {
						case out <- ev:
						case <-done:
							return
						}
					case <-done:
						return
					}
				}
			})
		}
	}
	return out, func() {
		close(done)
		for _, c := range cancels {
			c()
		}
		wg.Wait()
	}
}

// all returns the clients whose River tables may hold shard's jobs: its own,
// and in a working process those of its worker nodes.
func (cs *Clients) all(shard string) []*river.Client[pgx.Tx] {
	out := []*river.Client[pgx.Tx]{cs.byShard[shard]}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, nc := range cs.onNodes[shard] {
		out = append(out, nc.client)
	}
	return out
}

// Busy reports whether a job is waiting to run or running on any shard (and
// any of its nodes), so pmapi dev can let its demo seed's jobs finish before
// it prints its banner.
func (cs *Clients) Busy(ctx context.Context) (bool, error) {
	for name := range cs.byShard {
		for _, c := range cs.all(name) {
			res, err := c.JobList(ctx, river.NewJobListParams().
				States(rivertype.JobStateAvailable, rivertype.JobStateRunning).First(1))
			if err != nil {
				return false, err
			}
			if len(res.Jobs) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// Stop lets running jobs finish until ctx ends, then cancels what remains.
func (cs *Clients) Stop(ctx context.Context) error {
	if !cs.working {
		return nil
	}
	if cs.stopWatch != nil {
		cs.stopWatch()
		<-cs.watched
	}
	var clients []*river.Client[pgx.Tx]
	for name := range cs.byShard {
		clients = append(clients, cs.all(name)...)
	}
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { errs[i] = stopClient(ctx, c) })
	}
	wg.Wait()
	cs.mu.Lock()
	for _, nodes := range cs.onNodes {
		for _, nc := range nodes {
			nc.own.Close()
		}
	}
	cs.mu.Unlock()
	return errors.Join(errs...)
}

// stopClient lets c's running jobs finish until ctx ends, then cancels them.
func stopClient(ctx context.Context, c *river.Client[pgx.Tx]) error {
	if err := c.Stop(ctx); err != nil {
		return c.StopAndCancel(context.Background())
	}
	return nil
}

// PoolConns is how many connections a shard's pool needs so that none of its
// workers waits for one: a job holds one while it reads or writes, River's
// notifier holds one for good to LISTEN, and its fetcher, completer and
// maintenance services take one each while they run. A pool of pgx's default
// size (four on small machines) left twenty workers queueing for three.
func PoolConns(workers int) int32 { return int32(workers) + 5 }
