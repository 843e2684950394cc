package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/madeup"
	"github.com/pmapi/pmapi/internal/rig"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/resource/rrca/quality"
)

// RRCAReport is what -rrca (make bench-quality) measures: the quality
// benchmark's numbers, and at each workspace size how soon an analysis's
// neighbours are ready after a change on an idle server and what a
// recomputation costs.
type RRCAReport struct {
	StartedAt time.Time      `json:"startedAt"`
	Machine   Machine        `json:"machine"`
	Postgres  string         `json:"postgres"`
	Quality   quality.Report `json:"quality"`
	Sizes     []RRCASize     `json:"sizes"`
}

// RRCASize is one workspace size's readiness and cost.
type RRCASize struct {
	Analyses int `json:"analyses"`
	// BuildSeconds is how long the workers took to compute every analysis
	// of the copied-in workspace, one job each.
	BuildSeconds float64 `json:"buildSeconds"`
	// BuildWorkerCPUms and BuildPostgresCPUms are per recomputation over
	// that build (each saw the workspace as computed so far).
	BuildWorkerCPUms   float64 `json:"buildWorkerCpuMsPerRecompute"`
	BuildPostgresCPUms float64 `json:"buildPostgresCpuMsPerRecompute"`
	// Changes are the single changes made afterwards, one at a time through
	// the API (a WHY added): their readiness (from the 2xx answer to
	// pending false) and what each cost pmapi work (the recomputation) and
	// PostgreSQL (the write and the recomputation).
	Changes      int     `json:"changes"`
	ReadyP50ms   float64 `json:"readyP50ms"`
	ReadyP95ms   float64 `json:"readyP95ms"`
	ReadyMaxms   float64 `json:"readyMaxMs"`
	WorkerCPUms  float64 `json:"workerCpuMsPerRecompute"`
	ServeCPUms   float64 `json:"serveCpuMsPerChange"`
	PostgresCPUm float64 `json:"postgresCpuMsPerChange"`
	// QueueP50ms and the rest split readiness by River's job rows: from the
	// change's commit (the job's insert) to a worker starting it, and from
	// there to its completion (in the transaction that wrote the scores).
	QueueP50ms float64 `json:"queueP50ms"`
	QueueP95ms float64 `json:"queueP95ms"`
	RunP50ms   float64 `json:"runP50ms"`
	RunP95ms   float64 `json:"runP95ms"`
	// Statements (-statements) is pg_stat_statements per change of the cost
	// phase.
	Statements []Statement `json:"statements,omitempty"`
	// Neighbours is the mean number of neighbours an analysis has (a pair is
	// one row, and a neighbour of both its analyses).
	Neighbours float64 `json:"neighbours"`
}

// rrcaDefaults are -rrca's sizes and changes: a comma list, or 1,000 and
// 10,000 analyses with 100 changes each (200 and 1,000 with 30 when quick).
func rrcaDefaults(quick bool, sizes string, changes int) ([]int, int) {
	if sizes == "" {
		sizes = "1000,10000"
		if quick {
			sizes = "200,1000"
		}
	}
	if changes <= 0 {
		changes = 100
		if quick {
			changes = 30
		}
	}
	var out []int
	for _, f := range strings.Split(sizes, ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out, changes
}

// rrcaScopes are the scopes the benchmark's keys carry.
var rrcaScopes = []string{"projects:read", "projects:write", "tasks:read", "tasks:write", "risks:read", "risks:write",
	"rrca:read", "rrca:write"}

// keyAPI is a tenant's key as the quality benchmark's client.
type keyAPI struct {
	c   rig.Client
	key map[string]string
}

func (k keyAPI) Call(ctx context.Context, method, path string, body any) (map[string]any, error) {
	return k.c.Call(ctx, method, path, k.key, body)
}

// runRRCA is make bench-quality: pmapi serve and work on a private
// PostgreSQL, the quality benchmark loaded through the API into two
// workspaces, then workspaces of each size in sizes copied in and computed by
// the workers, with single changes timed and costed on the idle server.
func runRRCA(ctx context.Context, o options, sizes []int, changes int) (*RRCAReport, string, error) {
	rep := &RRCAReport{StartedAt: time.Now().UTC(),
		Machine: Machine{CPUs: runtime.NumCPU(), MemoryGiB: memTotalGiB(), GoVersion: runtime.Version(),
			GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}}
	if o.Pmapi == "" {
		dir, err := os.MkdirTemp("", "pmbench-bin-")
		if err != nil {
			return nil, "", err
		}
		defer os.RemoveAll(dir)
		if o.Pmapi, err = rig.Build(ctx, dir); err != nil {
			return nil, "", err
		}
	}
	cl, err := startCluster(ctx, o.Log, o.Statements)
	if err != nil {
		return nil, "", err
	}
	defer cl.stop()
	rep.Postgres = cl.version
	addr, err := rig.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	token := "pmadm_" + pmapi.RandomBase62(32)
	env := append(rig.Environ(cl.db.AppURL, addr, token, ""), "PMAPI_METRICS_ADDR=off")
	serve, err := rig.Start(o.Pmapi, "serve", env)
	if err != nil {
		return nil, "", err
	}
	defer serve.Stop()
	work, err := rig.Start(o.Pmapi, "work", env)
	if err != nil {
		return nil, "", err
	}
	defer work.Stop()
	base := "http://" + addr
	if err := rig.WaitUp(ctx, base+"/healthz", serve, 60*time.Second); err != nil {
		return nil, "", err
	}
	c := rig.Client{Base: base, HTTP: httpClient(8, nil)}
	tenant := func(name string) (keyAPI, rig.Tenant, error) {
		tn, err := rig.NewTenant(ctx, c, token, name, rrcaScopes)
		return keyAPI{c, tn.Key}, tn, err
	}
	full, _, err := tenant("quality-full")
	if err != nil {
		return nil, "", err
	}
	early, _, err := tenant("quality-early")
	if err != nil {
		return nil, "", err
	}
	ds, err := quality.Load()
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(o.Log, "pmbench: loading the quality benchmark (%d analyses) into two workspaces\n", len(ds.Analyses))
	if rep.Quality, err = quality.Run(ctx, full, early, ds, 5*time.Minute); err != nil {
		return rep, "", fmt.Errorf("quality: %w\n%s", err, work.Logs())
	}
	pool, err := pgxpool.New(ctx, cl.db.AdminURL)
	if err != nil {
		return rep, "", err
	}
	defer pool.Close()
	if rep.Quality.Before, err = quality.Before(ctx, ds, quality.Postgres{DB: pool}); err != nil {
		return rep, "", fmt.Errorf("quality, the former ranking: %w", err)
	}
	for _, n := range sizes {
		api, tn, err := tenant(fmt.Sprintf("scale-%d", n))
		if err != nil {
			return rep, "", err
		}
		s, err := measureSize(ctx, o, cl, pool, api, tn, ds, n, changes, work.Pid(), serve.Pid())
		if err != nil {
			return rep, "", fmt.Errorf("%d analyses: %w\n%s", n, err, work.Logs())
		}
		rep.Sizes = append(rep.Sizes, s)
	}
	path, err := writeRRCAReport(o.OutDir, rep)
	return rep, path, err
}

// measureSize copies n analyses into tn's workspace (copies of the
// benchmark's analyses, each with made-up words of its own, so a workspace
// has many topics), has the workers compute them all, then makes changes
// single changes through the API on the idle server.
func measureSize(ctx context.Context, o options, cl *cluster, pool *pgxpool.Pool, api keyAPI, tn rig.Tenant,
	ds quality.Dataset, n, changes, workPid, servePid int) (RRCASize, error) {
	s := RRCASize{Analyses: n, Changes: changes}
	ws, err := uuid.Parse(tn.WorkspaceID)
	if err != nil {
		return s, err
	}
	fmt.Fprintf(o.Log, "pmbench: copying %d analyses into a workspace\n", n)
	ids, err := copyAnalyses(ctx, pool, ws, ds, n)
	if err != nil {
		return s, err
	}
	riverClient, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		return s, err
	}
	w0, p0, t0 := cpuSeconds(workPid), sum(cl.postgresCPU()), time.Now()
	for i := 0; i < len(ids); i += 1000 {
		params := make([]river.InsertManyParams, 0, 1000)
		for _, id := range ids[i:min(i+1000, len(ids))] {
			params = append(params, river.InsertManyParams{Args: jobs.SimilarityArgs{WorkspaceID: ws, RRCAID: id}})
		}
		if _, err := riverClient.InsertMany(ctx, params); err != nil {
			return s, err
		}
	}
	for {
		var pending int
		if err := pool.QueryRow(ctx, `select count(*) from rrca_analyses a left join rrca_similarity s
			on s.workspace_id = a.workspace_id and s.rrca_id = a.id
			where a.workspace_id = $1 and a.similarity_version > coalesce(s.version, 0)`, ws).
			Scan(&pending); err != nil {
			return s, err
		}
		if pending == 0 {
			break
		}
		if time.Since(t0) > 30*time.Minute {
			return s, fmt.Errorf("%d analyses still pending after 30 minutes", pending)
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.BuildSeconds = time.Since(t0).Seconds()
	s.BuildWorkerCPUms = (cpuSeconds(workPid) - w0) * 1000 / float64(n)
	s.BuildPostgresCPUms = (sum(cl.postgresCPU()) - p0) * 1000 / float64(n)
	if err := pool.QueryRow(ctx, `select 2 * count(*)::float8 / $2 from rrca_similar where workspace_id = $1`, ws, n).
		Scan(&s.Neighbours); err != nil {
		return s, err
	}
	cl.waitJobsDrained(ctx, time.Minute)
	time.Sleep(time.Second)
	r := rand.New(rand.NewPCG(uint64(n), 3))
	change := func() (string, error) {
		id := pmapi.FormatID(pmapi.RRCAIDPrefix, ids[r.IntN(len(ids))])
		src := ds.Analyses[r.IntN(len(ds.Analyses))]
		text := src.Title
		if len(src.Nodes) > 0 {
			text = src.Nodes[r.IntN(len(src.Nodes))].Text
		}
		_, err := api.Call(ctx, "POST", "/openapi/v1/resource/rrca/"+id+"/nodes",
			map[string]any{"kind": "WHY", "text": text})
		return id, err
	}
	// Cost: changes one at a time, each waited for by reading the database
	// directly every 20 ms, so the polls cost the API nothing and PostgreSQL
	// little.
	if o.Statements {
		if err := resetStatements(ctx, cl.db.AdminURL); err != nil {
			return s, err
		}
	}
	w0, p0, s0 := cpuSeconds(workPid), sum(cl.postgresCPU()), cpuSeconds(servePid)
	for range changes {
		id, err := change()
		if err != nil {
			return s, err
		}
		uid, _ := pmapi.ParseID(pmapi.RRCAIDPrefix, id, "rrca")
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			var pending bool
			if err := pool.QueryRow(ctx, `select a.similarity_version > coalesce(s.version, 0) from rrca_analyses a
				left join rrca_similarity s on s.workspace_id = a.workspace_id and s.rrca_id = a.id
				where a.workspace_id = $1 and a.id = $2`, ws, uid).Scan(&pending); err != nil {
				return s, err
			}
			if !pending {
				break
			}
			if time.Since(start) > time.Minute {
				return s, fmt.Errorf("%s still pending after a minute", id)
			}
		}
	}
	s.WorkerCPUms = (cpuSeconds(workPid) - w0) * 1000 / float64(changes)
	s.ServeCPUms = (cpuSeconds(servePid) - s0) * 1000 / float64(changes)
	s.PostgresCPUm = (sum(cl.postgresCPU()) - p0) * 1000 / float64(changes)
	if o.Statements {
		rows, err := readStatements(ctx, cl.db.AdminURL, cl.db.Name)
		if err != nil {
			return s, err
		}
		s.Statements = perUnit(rows, changes)
	}
	// Readiness: changes one at a time, each followed by the API's similar
	// list every 2 ms until it is no longer pending.
	var ready []float64
	since := time.Now()
	for range changes {
		id, err := change()
		if err != nil {
			return s, err
		}
		start := time.Now()
		for {
			l, err := api.Call(ctx, "GET", "/openapi/v1/resource/rrca/"+id+"/similar?limit=1", nil)
			if err != nil {
				return s, err
			}
			if l["pending"] == false {
				break
			}
			if time.Since(start) > time.Minute {
				return s, fmt.Errorf("%s still pending after a minute", id)
			}
			time.Sleep(2 * time.Millisecond)
		}
		ready = append(ready, float64(time.Since(start).Microseconds())/1000)
		// An idle server: the next change comes after a pause.
		time.Sleep(50 * time.Millisecond)
	}
	sort.Float64s(ready)
	s.ReadyP50ms, s.ReadyP95ms, s.ReadyMaxms = ready[len(ready)/2], ready[len(ready)*95/100], ready[len(ready)-1]
	// Where the time went: River's job rows of the readiness phase.
	err = pool.QueryRow(ctx, `select
			percentile_cont(0.5) within group (order by extract(epoch from attempted_at - created_at)) * 1000,
			percentile_cont(0.95) within group (order by extract(epoch from attempted_at - created_at)) * 1000,
			percentile_cont(0.5) within group (order by extract(epoch from finalized_at - attempted_at)) * 1000,
			percentile_cont(0.95) within group (order by extract(epoch from finalized_at - attempted_at)) * 1000
		from `+migrations.RiverSchema+`.river_job
		where kind = 'rrca.similarity' and created_at >= $1 and state = 'completed'`, since).
		Scan(&s.QueueP50ms, &s.QueueP95ms, &s.RunP50ms, &s.RunP95ms)
	return s, err
}

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}

// copyAnalyses copies n analyses into the workspace as the superuser (COPY,
// past row-level security), with their nodes chained as the benchmark writes
// them, each marked changed so that its similarity job computes it.
func copyAnalyses(ctx context.Context, pool *pgxpool.Pool, ws uuid.UUID, ds quality.Dataset, n int) (
	[]uuid.UUID, error) {
	words := madeup.Words(35, 5000)
	r := rand.New(rand.NewPCG(uint64(n), 9))
	made := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	var analyses, nodes [][]any
	ids := make([]uuid.UUID, n)
	now := time.Now()
	for i := range n {
		src := ds.Analyses[r.IntN(len(ds.Analyses))]
		id := pmapi.NewID()
		ids[i] = id
		analyses = append(analyses, []any{ws, id, src.Title + " " + made(1), src.Problem + " " + made(3), now, now})
		var parent *uuid.UUID
		for _, nd := range src.Nodes {
			nid := pmapi.NewID()
			p := parent
			if nd.Kind == "ESCAPE_POINT" || nd.Kind == "EVIDENCE" {
				p = nil
			}
			nodes = append(nodes, []any{ws, nid, id, p, nd.Kind, nd.Text + " " + made(2), now})
			if nd.Kind == "WHY" {
				parent = &nid
			}
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"rrca_analyses"},
		[]string{"workspace_id", "id", "title", "problem_statement", "created_at", "updated_at"},
		pgx.CopyFromRows(analyses)); err != nil {
		return nil, err
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"rrca_nodes"},
		[]string{"workspace_id", "id", "rrca_id", "parent_id", "kind", "text", "created_at"},
		pgx.CopyFromRows(nodes)); err != nil {
		return nil, err
	}
	_, err = conn.Exec(ctx, "analyze rrca_analyses, rrca_nodes")
	return ids, err
}

func writeRRCAReport(dir string, rep *RRCAReport) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rrca-"+rep.StartedAt.Format("20060102T150405Z")+".json")
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

func printRRCA(w io.Writer, rep *RRCAReport) {
	fmt.Fprintf(w, "\npmbench -rrca %s: %d CPUs, PostgreSQL %s\n\n", rep.StartedAt.Format(time.RFC3339), rep.Machine.CPUs,
		rep.Postgres)
	rep.Quality.Print(w, false)
	if len(rep.Sizes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nsimilar analyses after one change on an idle server (a WHY added through the API)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "analyses\tneighbours each\tready p50 ms\tp95 ms\tmax ms\tqueued p50/p95 ms\trun p50/p95 ms\t"+
		"work CPU ms/recompute\tpostgres CPU ms/change\tserve CPU ms/change\tbuild s\tbuild: work ms\tpostgres ms\t")
	for _, s := range rep.Sizes {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f / %.1f\t%.1f / %.1f\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%.2f\t\n",
			s.Analyses, s.Neighbours, s.ReadyP50ms, s.ReadyP95ms, s.ReadyMaxms, s.QueueP50ms, s.QueueP95ms,
			s.RunP50ms, s.RunP95ms,
			s.WorkerCPUms, s.PostgresCPUm, s.ServeCPUms, s.BuildSeconds, s.BuildWorkerCPUms, s.BuildPostgresCPUms)
	}
	tw.Flush()
	for _, s := range rep.Sizes {
		if len(s.Statements) > 0 {
			name := fmt.Sprintf("%d analyses, per change", s.Analyses)
			printStatements(w, Scenario{Name: name, Statements: s.Statements})
		}
	}
}
