package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/rig"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// bench is one world of a run: the cluster, the two pmapi processes, the
// webhook receiver and the seeded workspace. A run has one on a single
// PostgreSQL and, with -citus, a second one on a Citus cluster.
type bench struct {
	o     options
	citus bool
	out   *[]Scenario // where the world's scenarios go, as each ends
	cl    *cluster
	pgb   pgbench
	tmp   string
	rcv   *receiver
	serve *rig.Proc
	work  *rig.Proc
	// serveDebug and workDebug are the metrics (and pprof) listeners, set
	// only with -profile.
	serveDebug, workDebug string
	base                  string
	client                *http.Client
	load                  *loadClient // the closed loops' client, with the API key
	keyH                  http.Header
	console               map[string]string
	appID                 string
	workspaceID           string
	adminToken            string

	seed         Seed
	setupSeconds float64 // the cluster's start and the migrations
	projects     []string
	tasks        []string
	statuses     []string // the status each task is in; worker w owns the tasks i with i%conc == w
	ratesMu      sync.Mutex
	next         int // the constant-rate writers' position in tasks
}

// newBench sets up a world: on a single PostgreSQL with pgbench's database
// beside pmapi's, or (citus) on a Citus cluster without pgbench, with pmapi
// in set_local mode; then the two pmapi processes and the seed. o.Pmapi is a
// built binary.
func newBench(ctx context.Context, o options, citus bool, out *[]Scenario) (b *bench, err error) {
	b = &bench{o: o, citus: citus, out: out}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.tmp, err = os.MkdirTemp("", "pmbench-"); err != nil {
		return b, err
	}
	t0 := time.Now()
	if citus {
		fmt.Fprintln(o.Log, "pmbench: starting a Citus coordinator and two workers, migrating pmapi's database there")
		if b.cl, err = startCitus(ctx, o.Log, !o.citusNotDurable, o.CitusShards); err != nil {
			return b, fmt.Errorf("citus: %w", err)
		}
		fmt.Fprintf(
			o.Log,
			"pmbench: Citus %s on %s, %d shards a table\n",
			b.cl.citusVersion,
			strings.Join(b.cl.nodes, ", "),
			b.cl.shardCount,
		)
	} else {
		pgbBin, err := findPgbench()
		if err != nil {
			return b, err
		}
		if b.cl, err = startCluster(ctx, o.Log, o.Statements); err != nil {
			return b, err
		}
		b.pgb = pgbench{bin: pgbBin, url: b.cl.pgbURL, postmaster: b.cl.postmasters[0]}
		fmt.Fprintf(o.Log, "pmbench: pgbench -i -s %d\n", o.Scale)
		if err := b.pgb.init(ctx, o.Scale); err != nil {
			return b, err
		}
	}
	b.setupSeconds = time.Since(t0).Seconds()

	b.rcv = newReceiver()
	caFile, err := rig.TrustFile(b.tmp, b.rcv.srv)
	if err != nil {
		return b, err
	}
	addr, err := rig.FreeAddr()
	if err != nil {
		return b, err
	}
	token := "pmadm_" + pmapi.RandomBase62(32)
	dbURL := b.cl.db.AppURL
	if o.PoolMaxConns > 0 {
		u, err := url.Parse(dbURL)
		if err != nil {
			return b, err
		}
		q := u.Query()
		q.Set("pool_max_conns", strconv.Itoa(o.PoolMaxConns))
		u.RawQuery = q.Encode()
		dbURL = u.String()
	}
	env := rig.Environ(dbURL, addr, token, caFile)
	if citus {
		// set_config would stay on the coordinator; the role's
		// citus.propagate_set_commands = 'local' (pgcluster.EnsureRoles)
		// carries SET LOCAL to the workers.
		env = append(env, "PMAPI_TENANT_SETTING="+tenant.SetLocal.String())
	}
	serveEnv, workEnv := append(
		env[:len(env):len(env)],
		"PMAPI_METRICS_ADDR=off",
	), append(
		env[:len(env):len(env)],
		"PMAPI_METRICS_ADDR=off",
	)
	if o.ProfileDir != "" {
		// Each process gets its own metrics listener, which serves pprof.
		if b.serveDebug, err = rig.FreeAddr(); err != nil {
			return b, err
		}
		if b.workDebug, err = rig.FreeAddr(); err != nil {
			return b, err
		}
		serveEnv[len(serveEnv)-1] = "PMAPI_METRICS_ADDR=" + b.serveDebug
		workEnv[len(workEnv)-1] = "PMAPI_METRICS_ADDR=" + b.workDebug
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return b, err
		}
	}
	if o.PerfDir != "" {
		if _, err := exec.LookPath("perf"); err != nil {
			return b, fmt.Errorf("-perf needs perf(1) (linux-perf): %w", err)
		}
		if err := os.MkdirAll(o.PerfDir, 0o755); err != nil {
			return b, err
		}
	}
	if b.serve, err = rig.Start(o.Pmapi, "serve", serveEnv); err != nil {
		return b, err
	}
	if b.work, err = rig.Start(o.Pmapi, "work", workEnv); err != nil {
		return b, err
	}
	b.base = "http://" + addr
	if err := rig.WaitUp(ctx, b.base+"/healthz", b.serve, 60*time.Second); err != nil {
		return b, err
	}
	b.client = httpClient(o.Concurrency, nil)
	b.adminToken = token
	t0 = time.Now()
	if err := b.seedWorkspace(ctx, token); err != nil {
		return b, fmt.Errorf("seed: %w\n%s", err, b.serve.Logs())
	}
	b.seed = Seed{Projects: len(b.projects), Tasks: len(b.tasks), Risks: o.Risks, Seconds: time.Since(t0).Seconds()}
	fmt.Fprintf(
		o.Log,
		"pmbench: seeded %d projects, %d tasks, %d risks in %.1f s\n",
		len(b.projects),
		len(b.tasks),
		o.Risks,
		b.seed.Seconds,
	)
	if n := b.cl.waitJobsDrained(ctx, 2*time.Minute); n > 0 {
		fmt.Fprintf(o.Log, "pmbench: %d seed jobs still pending\n", n)
	}
	return b, nil
}

// processes is what pmapi serve and work used over the world's life.
func (b *bench) processes() (serve, work Process) {
	return Process{PeakRSSMiB: peakRSSMB(b.serve.Pid()), CPUSeconds: cpuSeconds(b.serve.Pid())},
		Process{PeakRSSMiB: peakRSSMB(b.work.Pid()), CPUSeconds: cpuSeconds(b.work.Pid())}
}

func (b *bench) close() {
	for _, p := range []*rig.Proc{b.serve, b.work} {
		if p != nil {
			p.Stop()
		}
	}
	if b.rcv != nil {
		b.rcv.srv.Close()
	}
	if b.cl != nil {
		b.cl.stop()
	}
	if b.tmp != "" {
		os.RemoveAll(b.tmp)
	}
}

var allScopes = []string{"projects:read", "projects:write", "tasks:read", "tasks:write", "risks:read", "risks:write",
	"webhooks:read", "webhooks:write"}

// seedWorkspace creates the workspace, user, session, app and key through the
// admin and console APIs, then projects, tasks (batch endpoint, 100 per call)
// and risks through the app API with the key.
func (b *bench) seedWorkspace(ctx context.Context, token string) error {
	a := rig.Client{Base: b.base, HTTP: b.client}
	tn, err := rig.NewTenant(ctx, a, token, "pmbench", allScopes)
	if err != nil {
		return err
	}
	b.console, b.appID, b.workspaceID = tn.Console, tn.AppID, tn.WorkspaceID
	b.keyH = http.Header{"Content-Type": {"application/json"}}
	for k, v := range tn.Key {
		b.keyH.Set(k, v)
	}
	b.load = newLoadClient(b.o.Concurrency, b.keyH)
	keyM := tn.Key
	const base = "/openapi/v1/resource/"
	for i := range b.o.Projects {
		p, err := a.Call(
			ctx,
			"POST",
			base+"project/create",
			keyM,
			map[string]any{"name": fmt.Sprintf("Bench project %d", i+1)},
		)
		if err != nil {
			return err
		}
		b.projects = append(b.projects, p["id"].(string))
	}
	viaAPI := min(b.o.Tasks, apiSeedTasks)
	seedRand := rand.New(rand.NewPCG(1, 2))
	for done := 0; done < viaAPI; done += 100 {
		n := min(100, viaAPI-done)
		ops := make([]map[string]any, n)
		for i := range ops {
			k := done + i
			title, desc := seedText(seedRand, 4), seedText(seedRand, 12)
			ops[i] = map[string]any{"op": "create", "projectId": b.projects[k%len(b.projects)],
				"title": title, "description": desc, "priority": 1 + k%5}
		}
		out, err := a.Call(ctx, "POST", base+"task/batch", keyM, map[string]any{"atomic": true, "operations": ops})
		if err != nil {
			return err
		}
		results, _ := out["results"].([]any)
		for _, r := range results {
			data, _ := r.(map[string]any)["data"].(map[string]any)
			id, _ := data["id"].(string)
			if id == "" {
				return fmt.Errorf("a batch result without a task: %v", r)
			}
			b.tasks = append(b.tasks, id)
			b.statuses = append(b.statuses, "TODO")
		}
	}
	if b.o.Tasks > viaAPI {
		if err := b.bulkTasks(ctx, b.o.Tasks-viaAPI); err != nil {
			return err
		}
	}
	if err := b.vacuumTasks(ctx); err != nil {
		return err
	}
	if err := b.seedDeliveryHistory(ctx); err != nil {
		return err
	}
	// Risks one by one (there is no risk batch), 8 at a time.
	errc := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.o.Risks; i += 8 {
				_, err := a.Call(ctx, "POST", base+"risk/create", keyM, map[string]any{"projectId": b.projects[i%len(b.projects)],
					"title": fmt.Sprintf("Bench risk %d", i+1), "severity": []string{"LOW", "MEDIUM", "HIGH"}[i%3]})
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// scenario measures one closed loop or paced run with the API's and the
// worker's CPU time around it.
func (b *bench) measure(name, mode string, f func() loopResult) Scenario {
	var profiles sync.WaitGroup
	if b.o.ProfileDir != "" && mode == "closed-loop" {
		b.profile(&profiles, name, "serve", b.serveDebug)
		b.profile(&profiles, name, "work", b.workDebug)
	}
	statements := b.o.Statements && !b.citus && (name == "write" || name == "deliver")
	if statements {
		if err := resetStatements(context.Background(), b.cl.db.AdminURL); err != nil {
			fmt.Fprintf(b.o.Log, "pmbench: %s: pg_stat_statements: %v\n", name, err)
			statements = false
		}
	}
	guard0 := b.serve.Log.MultiShardErrors() + b.work.Log.MultiShardErrors()
	server0, serverErr := b.serverStats()
	var waits *waitSampler
	if b.o.Statements && !b.citus {
		waits = sampleWaits(context.Background(), b.cl.db.AdminURL, b.cl.db.Name)
	}
	var rec *perfRecording
	if b.o.PerfDir != "" && mode == "closed-loop" && !b.citus {
		var err error
		if rec, err = startPerf(b.o.PerfDir, name); err != nil {
			fmt.Fprintf(b.o.Log, "pmbench: %s: %v\n", name, err)
		}
	}
	api0, work0, self0, pg0 := cpuSeconds(b.serve.Pid()), cpuSeconds(b.work.Pid()), selfCPUSeconds(), b.cl.postgresCPU()
	apiSys0, pgSys0 := systemSeconds(b.serve.Pid()), b.cl.postgresSystemCPU()
	r := f()
	api1, work1, self1, pg1 := cpuSeconds(b.serve.Pid()), cpuSeconds(b.work.Pid()), selfCPUSeconds(), b.cl.postgresCPU()
	apiSys1, pgSys1 := systemSeconds(b.serve.Pid()), b.cl.postgresSystemCPU()
	perf := b.kernelSplit(name, rec)
	sampled := waits.finish()
	server1, err := b.serverStats()
	if serverErr == nil {
		serverErr = err
	}
	var stmts []statementRow
	if statements {
		var err error
		if stmts, err = readStatements(context.Background(), b.cl.db.AdminURL, b.cl.db.Name); err != nil {
			fmt.Fprintf(b.o.Log, "pmbench: %s: pg_stat_statements: %v\n", name, err)
		}
	}
	profiles.Wait()
	if serverErr != nil {
		fmt.Fprintf(b.o.Log, "pmbench: %s: server statistics: %v\n", name, serverErr)
	}
	s := Scenario{Name: name, Mode: mode, Requests: r.Requests, Errors: r.Errors, Non2xx: r.Non2xx, FirstError: r.FirstErr,
		Seconds: r.Elapsed.Seconds(), RPS: r.rps(), statementRows: stmts, Perf: perf,
		P50ms: quantile(r.Latencies, 0.50), P99ms: quantile(r.Latencies, 0.99), P999ms: quantile(r.Latencies, 0.999)}
	if serverErr == nil && !b.citus {
		s.Server = serverDelta(server0, server1)
		if sampled != nil {
			s.Server.Waits = sampled.Waits
			s.Server.ActiveBackends = sampled.ActiveBackends
			s.Server.OldestSnapshot = sampled.OldestSnapshot
		}
	}
	if ok := r.Requests - r.Errors; ok > 0 {
		s.Statements = perUnit(stmts, ok)
		s.APICPUPer1k = (api1 - api0) / float64(ok) * 1000
		s.APISystemCPUPer1k = (apiSys1 - apiSys0) / float64(ok) * 1000
		s.WorkerCPUPer1k = (work1 - work0) / float64(ok) * 1000
		s.PmbenchCPUPer1k = (self1 - self0) / float64(ok) * 1000
		if b.cl.local() {
			for i := range pg1 {
				node := (pg1[i] - pg0[i]) / float64(ok) * 1000
				s.PostgresCPUPer1k += node
				s.PostgresSystemCPUPer1k += (pgSys1[i] - pgSys0[i]) / float64(ok) * 1000
				if b.citus {
					s.PostgresNodesCPUPer1k = append(s.PostgresNodesCPUPer1k, node)
				}
			}
		}
	}
	if b.citus {
		// Read after the phase's last answer: a job that failed on the
		// guard may be logged a moment later, and counts in the next phase.
		n := b.serve.Log.MultiShardErrors() + b.work.Log.MultiShardErrors() - guard0
		s.MultiShardErrors = &n
	}
	if mode == "closed-loop" {
		s.Concurrency = b.o.Concurrency
	}
	fmt.Fprintf(
		b.o.Log,
		"pmbench: %s%s: %d requests, %.0f/s, %d errors (%d non-2xx)\n",
		b.label(),
		name,
		s.Requests,
		s.RPS,
		s.Errors,
		s.Non2xx,
	)
	return s
}

// serverStats snapshots the single node's counters (none on Citus, where
// each node has its own).
func (b *bench) serverStats() (statsSnapshot, error) {
	if b.citus {
		return statsSnapshot{}, nil
	}
	return readServerStats(context.Background(), b.cl.db.AdminURL)
}

// label prefixes the progress lines of the Citus world.
func (b *bench) label() string {
	if b.citus {
		return "citus: "
	}
	return ""
}

// kernelSplit stops a phase's perf recording and splits it by party: pmapi
// serve, the cluster's processes (the postmaster and its children, which
// for the read phases are the pool's backends throughout) and pmbench. A
// failure is logged, never fatal, as a profile's is.
func (b *bench) kernelSplit(phase string, rec *perfRecording) *PerfSplit {
	if rec == nil {
		return nil
	}
	split := &PerfSplit{}
	parties := map[int]*KernelSplit{b.serve.Pid(): &split.Serve, os.Getpid(): &split.Pmbench}
	pm := b.cl.postmasters[0]
	parties[pm] = &split.Postgres
	eachChild(pm, func(pid int, _ []string) { parties[pid] = &split.Postgres })
	err := rec.stop()
	if err == nil {
		err = rec.split(parties)
	}
	if err != nil {
		fmt.Fprintf(b.o.Log, "pmbench: %s: %v\n", phase, err)
		return nil
	}
	return split
}

// profile fetches a CPU profile of one process over the phase's length into
// ProfileDir/<phase>-<process>.pprof (citus-<phase>-... in the Citus world),
// in the background; a failure is logged, never fatal, since the figures do
// not depend on it.
func (b *bench) profile(wg *sync.WaitGroup, phase, process, addr string) {
	secs := max(1, int(b.o.Duration.Seconds()))
	name := strings.ReplaceAll(phase, " ", "-") + "-" + process + ".pprof"
	if b.citus {
		name = "citus-" + name
	}
	path := filepath.Join(b.o.ProfileDir, name)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := &http.Client{Timeout: time.Duration(secs+30) * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs))
		if err == nil {
			defer resp.Body.Close()
			var f *os.File
			if f, err = os.Create(path); err == nil {
				_, err = io.Copy(f, resp.Body)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			fmt.Fprintf(b.o.Log, "pmbench: profile %s: %v\n", path, err)
		}
	}()
}

func (b *bench) ratio(s *Scenario, ref string, r pgbenchResult) {
	s.Reference, s.RefValue = ref, r.TPS
	s.referenceCPU(r)
	if r.TPS > 0 {
		s.Ratio = s.RPS / r.TPS
	}
}

func (b *bench) add(s Scenario) { *b.out = append(*b.out, s) }

// half is the constant rate of a latency scenario: half a measured maximum.
func half(v float64) float64 { return max(1, v/2) }

func (b *bench) runAll(ctx context.Context) error {
	c, d := b.o.Concurrency, b.o.Duration
	add := b.add

	// read-detail
	detail := b.readDetail(ctx)
	tps, err := b.pgb.run(ctx, "select-only", c, d)
	if err != nil {
		return err
	}
	b.ratio(&detail, "pgbench -S", tps)
	add(detail)

	// read-list
	list := b.measure("read-list", "closed-loop", func() loopResult {
		return closedLoop(ctx, c, d, func(ctx context.Context, w, i int) error {
			u := b.base + "/openapi/v1/resource/task/list?limit=50&projectId=" + url.QueryEscape(
				b.projects[rand.IntN(len(b.projects))],
			)
			_, err := b.load.do("GET", u, nil)
			return err
		})
	})
	if tps, err = b.pgb.run(ctx, "select-only", c, d); err != nil {
		return err
	}
	b.ratio(&list, "pgbench -S", tps)
	add(list)

	// poll unchanged: the same reads with the ETag they answered, each a 304.
	polls, err := b.pollScenarios(ctx)
	if err != nil {
		return err
	}
	for _, s := range polls {
		add(s)
	}

	// read-list filtered, search: reads whose cost may grow with the
	// workspace (-tasks); no reference.
	add(b.measure("read-list filtered", "closed-loop", func() loopResult {
		return closedLoop(ctx, c, d, func(ctx context.Context, w, i int) error {
			_, err := b.load.do("GET", b.filteredListURL(), nil)
			return err
		})
	}))
	search := b.measure("search", "closed-loop", func() loopResult {
		return closedLoop(ctx, c, d, func(ctx context.Context, w, i int) error {
			_, err := b.load.do("GET", b.searchURL(), nil)
			return err
		})
	})
	add(search)
	paced := b.measure("latency search", "constant-rate", func() loopResult {
		return paced(ctx, half(search.RPS), d, c, func(t *vegeta.Target) error {
			t.Method, t.URL, t.Header = "GET", b.searchURL(), b.keyH
			return nil
		}, nil)
	})
	paced.TargetRate = half(search.RPS)
	add(paced)

	// write
	write := b.measure("write", "closed-loop", func() loopResult { return b.writeLoop(ctx, nil) })
	tpcb, err := b.pgb.run(ctx, "tpcb-like", c, d)
	if err != nil {
		return err
	}
	b.ratio(&write, "pgbench tpcb-like", tpcb)
	write.BacklogDiscarded = b.settle(ctx, "write")
	add(write)

	// latency: constant arrival rate at half of each measured maximum.
	add(b.pacedReads(ctx, half(detail.RPS)))
	lw := b.pacedWrites(ctx, "latency write", half(write.RPS), false)
	// Fan-out jobs still waiting would find the subscription made next and
	// deliver old events in the deliver scenario.
	lw.BacklogDiscarded = b.settle(ctx, "latency write")
	add(lw)

	// deliver: subscribe the receiver, then the same writes.
	hook, err := rig.Client{
		Base: b.base,
		HTTP: b.client,
	}.Call(
		ctx,
		"POST",
		"/openapi/v1/apps/"+b.appID+"/webhooks",
		b.console,
		map[string]any{"url": b.rcv.srv.URL, "events": []string{"task.updated"}},
	)
	if err != nil {
		return err
	}
	b.rcv.secret.Store(hook["secret"].(string))
	deliver, err := b.deliverMax(ctx)
	if err != nil {
		return err
	}
	add(deliver)
	add(b.pacedWrites(ctx, "latency deliver", half(deliver.DeliveriesPerS), true))
	return nil
}

// runCitus runs, in the Citus world, the scenarios compared with the single
// node's: the read-detail and write closed loops, then each at a constant
// rate. The rate is the single node's (half its maximum), so the latencies
// compare at the same offered load, but never above half of Citus's own
// maximum, where the open loop would only measure a queue.
//
// Then the workspace-per-worker variant: a second workspace on the other
// worker, and read-detail and write sent half to each (split.go).
func (b *bench) runCitus(ctx context.Context, single []Scenario) error {
	detail := b.readDetail(ctx)
	b.add(detail)
	write := b.measure("write", "closed-loop", func() loopResult { return b.writeLoop(ctx, nil) })
	write.BacklogDiscarded = b.settle(ctx, "write")
	b.add(write)
	rate := func(name string, own float64) float64 {
		for _, s := range single {
			if s.Name == name && s.TargetRate > 0 {
				return min(s.TargetRate, half(own))
			}
		}
		return half(own)
	}
	b.add(b.pacedReads(ctx, rate("latency read-detail", detail.RPS)))
	lw := b.pacedWrites(ctx, "latency write", rate("latency write", write.RPS), false)
	lw.BacklogDiscarded = b.settle(ctx, "latency write")
	b.add(lw)
	o, err := b.seedOther(ctx)
	if err != nil {
		return fmt.Errorf("the second workspace: %w", err)
	}
	b.cl.waitJobsDrained(ctx, time.Minute)
	b.runSplit(ctx, o)
	return nil
}

// readDetail is the closed loop of task reads.
func (b *bench) readDetail(ctx context.Context) Scenario {
	return b.measure("read-detail", "closed-loop", func() loopResult {
		return closedLoop(ctx, b.o.Concurrency, b.o.Duration, func(ctx context.Context, w, i int) error {
			_, err := b.load.do("GET", b.detailURL(rand.IntN(len(b.tasks))), nil)
			return err
		})
	})
}

// pacedReads is read-detail at a constant rate, with vegeta.
func (b *bench) pacedReads(ctx context.Context, rate float64) Scenario {
	s := b.measure("latency read-detail", "constant-rate", func() loopResult {
		return paced(ctx, rate, b.o.Duration, b.o.Concurrency, func(t *vegeta.Target) error {
			t.Method, t.URL, t.Header = "GET", b.detailURL(rand.IntN(len(b.tasks))), b.keyH
			return nil
		}, nil)
	})
	s.TargetRate = rate
	return s
}

// settle gives the workers up to 10 s (twice the phase's length when shorter)
// to finish the jobs a phase left, then deletes the rest so the next phase
// starts without a backlog; it returns how many.
func (b *bench) settle(ctx context.Context, phase string) int {
	b.cl.waitJobsDrained(ctx, min(10*time.Second, 2*b.o.Duration))
	n, err := b.cl.discardJobs(ctx)
	if err != nil {
		fmt.Fprintf(b.o.Log, "pmbench: %s: discarding jobs: %v\n", phase, err)
	}
	if n > 0 {
		fmt.Fprintf(b.o.Log, "pmbench: %s: discarded %d jobs the workers had not reached\n", phase, n)
	}
	b.cl.waitJobsDrained(ctx, 10*time.Second) // the ones running
	return int(n)
}

func (b *bench) detailURL(i int) string {
	return b.base + "/openapi/v1/resource/task/detail?id=" + b.tasks[i]
}

// updateBody moves task i to the other status of TODO ↔ IN_PROGRESS.
func (b *bench) updateBody(i int) (next string, body []byte) {
	next = "IN_PROGRESS"
	if b.statuses[i] == "IN_PROGRESS" {
		next = "TODO"
	}
	body, _ = json.Marshal(map[string]string{"taskId": b.tasks[i], "status": next})
	return next, body
}

type updated struct {
	Data struct {
		ID        string `json:"id"`
		UpdatedAt string `json:"updatedAt"`
	} `json:"data"`
}

// writeLoop is the closed loop of status updates: worker w moves its own tasks
// one after another, so no two requests touch one task at once. commits (when
// not nil) gets, for each update, when its answer arrived.
func (b *bench) writeLoop(ctx context.Context, commits func(key string, at time.Time)) loopResult {
	c := b.o.Concurrency
	return closedLoop(ctx, c, b.o.Duration, func(ctx context.Context, w, i int) error {
		owned := (len(b.tasks) - w + c - 1) / c
		if owned <= 0 {
			return fmt.Errorf("fewer tasks than workers")
		}
		k := w + (i%owned)*c
		next, body := b.updateBody(k)
		raw, err := b.load.do("POST", b.base+"/openapi/v1/resource/task/update", body)
		if err != nil {
			return err
		}
		b.statuses[k] = next
		if commits != nil {
			var u updated
			if json.Unmarshal(raw, &u) == nil {
				commits(u.Data.ID+"|"+u.Data.UpdatedAt, time.Now())
			}
		}
		return nil
	})
}

// deliverMax runs the closed loop of updates with the subscription, waits for
// the deliveries, and measures the references right after: a raw Go client
// posting the same signed body to the same receiver, and tpcb-like.
func (b *bench) deliverMax(ctx context.Context) (Scenario, error) {
	c, d := b.o.Concurrency, b.o.Duration
	var mu sync.Mutex
	commits := map[string]time.Time{}
	b.rcv.reset()
	start := time.Now()
	s := b.measure("deliver", "closed-loop", func() loopResult {
		r := b.writeLoop(ctx, func(k string, at time.Time) { mu.Lock(); commits[k] = at; mu.Unlock() })
		// The workers' CPU counts until the backlog is delivered, or the
		// bounded wait ends (the rest is counted as undelivered).
		b.rcv.waitCount(ctx, r.Requests-r.Errors, 2*d+10*time.Second)
		return r
	})
	b.fillDeliveries(&s, commits, start)
	s.Statements = perUnit(s.statementRows, s.Deliveries)
	s.BacklogDiscarded = b.settle(ctx, "deliver")
	b.rcv.reset()
	// The raw client posts a body pmapi delivered (re-signed with the same
	// secret, as each attempt is), or one of the same shape if none came.
	sample := b.rcv.firstBody()
	if sample == nil {
		sample, _ = json.Marshal(
			webhook.Body{
				ID:     "whd_sample",
				Type:   "task.updated",
				Data:   json.RawMessage(`{"id":"` + b.tasks[0] + `","updatedAt":"x"}`),
				SentAt: time.Now(),
			},
		)
	}
	raw := b.rawClient(ctx, sample)
	s.RawClientPerS = raw
	if raw > 0 {
		s.RatioRawClient = s.DeliveriesPerS / raw
	}
	tpcb, err := b.pgb.run(ctx, "tpcb-like", c, d)
	if err != nil {
		return s, err
	}
	s.TpcbTPS = tpcb.TPS
	s.RatioTpcb = s.DeliveriesPerS / tpcb.TPS
	s.referenceCPU(tpcb)
	s.Reference, s.RefValue, s.Ratio = "pgbench tpcb-like (deliveries/s)", tpcb.TPS, s.RatioTpcb
	return s, nil
}

// referenceCPU sets s's reference CPU figures from its pgbench run.
func (s *Scenario) referenceCPU(r pgbenchResult) {
	s.RefPostgresCPUPer1k, s.RefClientCPUPer1k = r.PostgresCPUPer1k, r.ClientCPUPer1k
	s.RefPostgresSystemCPUPer1k = r.PostgresSystemCPUPer1k
}

// fillDeliveries sets the delivery figures of s from the receiver.
func (b *bench) fillDeliveries(s *Scenario, commits map[string]time.Time, start time.Time) {
	s.Deliveries = int(b.rcv.count.Load())
	s.BadSignatures = int(b.rcv.badSig.Load())
	if last := b.rcv.last.Load(); last > 0 {
		s.DeliveriesPerS = float64(s.Deliveries) / time.Unix(0, last).Sub(start).Seconds()
	}
	lat, matched := b.rcv.latencies(commits)
	s.Undelivered = len(commits) - matched
	s.CommitToRcptP50, s.CommitToRcptP99 = quantile(lat, 0.5), quantile(lat, 0.99)
	if len(lat) > 0 {
		s.CommitToRcptMax = float64(lat[len(lat)-1].Microseconds()) / 1000
	}
}

// rawClient posts a signed body to the receiver from conc goroutines for the
// scenario's duration and returns the requests per second.
func (b *bench) rawClient(ctx context.Context, body []byte) float64 {
	pool := x509.NewCertPool()
	pool.AddCert(b.rcv.srv.Certificate())
	client := httpClient(b.o.Concurrency, &tls.Config{RootCAs: pool})
	secret := b.rcv.secret.Load().(string)
	b.rcv.reset()
	r := closedLoop(ctx, b.o.Concurrency, b.o.Duration, func(ctx context.Context, w, i int) error {
		now := time.Now()
		h := http.Header{"Content-Type": {"application/json"}, webhook.SignatureHeader: {webhook.Sign(body, now, secret)}}
		_, err := send(ctx, client, "POST", b.rcv.srv.URL, h, body)
		return err
	})
	fmt.Fprintf(b.o.Log, "pmbench: raw webhook client: %.0f/s, %d errors\n", r.rps(), r.Errors)
	return r.rps()
}

// pacedWrites sends status updates at rate with vegeta; with deliveries, the
// receiver is subscribed and commit-to-receipt of each update is measured.
func (b *bench) pacedWrites(ctx context.Context, name string, rate float64, deliveries bool) Scenario {
	commits := map[string]time.Time{}
	b.rcv.reset()
	start := time.Now()
	s := b.measure(name, "constant-rate", func() loopResult {
		r := paced(ctx, rate, b.o.Duration, b.o.Concurrency, func(t *vegeta.Target) error {
			b.ratesMu.Lock()
			i := b.next % len(b.tasks)
			b.next++
			next, body := b.updateBody(i)
			b.statuses[i] = next // assumed to succeed; a failure heals on the task's next turn
			b.ratesMu.Unlock()
			t.Method, t.URL, t.Header, t.Body = "POST", b.base+"/openapi/v1/resource/task/update", b.keyH, body
			return nil
		}, func(res *vegeta.Result) {
			var u updated
			if res.Code >= 200 && res.Code < 300 && json.Unmarshal(res.Body, &u) == nil {
				commits[u.Data.ID+"|"+u.Data.UpdatedAt] = res.End()
			}
		})
		if deliveries {
			b.rcv.waitCount(ctx, r.Requests-r.Errors, 2*b.o.Duration+30*time.Second)
		}
		return r
	})
	s.TargetRate = rate
	if deliveries {
		b.fillDeliveries(&s, commits, start)
	}
	return s
}
