// Command pmbench measures a real pmapi (release build, `pmapi serve` and
// `pmapi work` as separate processes) on a private PostgreSQL, and measures in
// the same run, on the same server and at the same concurrency, a reference for
// each scenario: pgbench's select-only and tpcb-like, and a raw Go HTTP client
// posting signed webhook bodies. Every figure is a ratio against its reference
// because the machine it runs on is shared and noisy.
//
// With -rrca (make bench-quality) it measures root-cause analyses instead:
// the quality benchmark of resource/rrca/quality through the API, then how
// soon similar analyses are ready after a change on an idle server and what a
// recomputation costs, at 1,000 and 10,000 analyses in a workspace.
//
// With -citus the same run then starts a Citus cluster (a coordinator and two
// workers from the machine's binaries), seeds the same workspace there and runs
// read-detail and write again, so Citus is compared with the single node in
// ratios too, with the multi-shard guard on.
//
//	make bench            # 100,000 tasks, 20 s per scenario
//	make bench QUICK=1    # 1,000 tasks, 3 s per scenario
//	make bench CITUS=1    # and read-detail and write on Citus
//	make bench-quality    # root-cause analyses: quality, readiness, cost
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/rig"
)

type options struct {
	Quick       bool
	Duration    time.Duration // per scenario
	Concurrency int
	Projects    int
	Tasks       int
	Risks       int
	Scale       int // pgbench -i -s
	// PoolMaxConns, when set, is added to pmapi's database URL
	// (pool_max_conns); 0 keeps pgx's default, max(4, CPUs).
	PoolMaxConns int
	Pmapi        string
	OutDir       string
	// ProfileDir, when set, gets a CPU profile of `pmapi serve` (and of
	// `pmapi work` in the deliver phase) for every closed-loop phase.
	ProfileDir string
	// PerfDir, when set, gets a `perf record` of the whole machine for every
	// closed-loop phase on the single node, and the report splits each
	// party's kernel time by what it was for (perf.go).
	PerfDir string
	// Citus adds the Citus phase; CitusShards is citus.shard_count for its
	// migrations (0: Citus's default, 32).
	Citus       bool
	CitusShards int
	// Statements preloads pg_stat_statements on the single node and reports
	// what each statement cost per request (write) and per delivery (deliver).
	Statements bool
	Log        io.Writer
	// citusNotDurable turns fsync off on the Citus nodes (the test, for
	// speed; the bench keeps it on, as on the single node).
	citusNotDurable bool
}

func main() {
	o := options{Log: os.Stderr}
	flag.BoolVar(&o.Quick, "quick", os.Getenv("QUICK") != "", "a few seconds per scenario and a smaller seed")
	flag.DurationVar(&o.Duration, "duration", 0, "per scenario (default 20s, quick 3s)")
	flag.IntVar(&o.Concurrency, "c", 64, "closed-loop concurrency and pgbench clients")
	flag.StringVar(&o.Pmapi, "pmapi", "", "a pmapi binary built with -trimpath -ldflags \"-s -w\" (default: build one)")
	flag.StringVar(&o.OutDir, "out", "bench/results", "where the JSON result goes")
	flag.IntVar(
		&o.Tasks,
		"tasks",
		0,
		"tasks in the bench workspace (default 100,000, quick 1,000); beyond 10,000 they are copied in",
	)
	flag.IntVar(&o.Scale, "scale", 1, "pgbench scale factor")
	flag.IntVar(&o.PoolMaxConns, "pool", 0, "pool_max_conns for pmapi's database URL (0: pgx's default, max(4, CPUs))")
	flag.StringVar(
		&o.ProfileDir,
		"profile",
		"",
		"write CPU profiles of pmapi (go tool pprof) for each closed-loop phase here",
	)
	flag.StringVar(
		&o.PerfDir,
		"perf",
		"",
		"record each closed-loop phase with perf(1) here (root) and split each party's kernel time: its own, and the "+
			"receive path it ran for its peers",
	)
	flag.BoolVar(
		&o.Citus,
		"citus",
		false,
		"then run read-detail and write on a three-node Citus cluster and compare (make bench CITUS=1)",
	)
	flag.BoolVar(
		&o.Statements,
		"statements",
		false,
		"load pg_stat_statements and report each statement's calls and time per write and per delivery (make bench "+
			"STATEMENTS=1)",
	)
	flag.IntVar(&o.CitusShards, "citus-shards", 0, "shards per distributed table on Citus (0: Citus's default, 32)")
	rrcaMode := flag.Bool("rrca", false,
		"measure root-cause analyses instead: quality, readiness and recompute cost (make bench-quality)")
	rrcaSizes := flag.String("rrca-sizes", "",
		"with -rrca, the workspace sizes for readiness and cost (default 1000,10000; quick 200,1000)")
	rrcaChanges := flag.Int("rrca-changes", 0,
		"with -rrca, the single changes timed at each size (default 100, quick 30)")
	flag.Parse()
	o.defaults()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *rrcaMode {
		sizes, changes := rrcaDefaults(o.Quick, *rrcaSizes, *rrcaChanges)
		rep, path, err := runRRCA(ctx, o, sizes, changes)
		if rep != nil {
			printRRCA(os.Stdout, rep)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pmbench:", err)
			os.Exit(1)
		}
		fmt.Println("\nresults:", path)
		return
	}
	rep, path, err := run(ctx, o)
	if rep != nil {
		printTable(os.Stdout, rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pmbench:", err)
		os.Exit(1)
	}
	fmt.Println("\nresults:", path)
}

func (o *options) defaults() {
	if o.Duration == 0 {
		o.Duration = 20 * time.Second
		if o.Quick {
			o.Duration = 3 * time.Second
		}
	}
	if o.Concurrency == 0 {
		o.Concurrency = 64
	}
	if o.Projects == 0 {
		o.Projects = 20
	}
	if o.Tasks == 0 {
		o.Tasks = 100_000
		if o.Quick {
			o.Tasks = 1_000
		}
	}
	if o.Risks == 0 {
		o.Risks = 1_000
		if o.Quick {
			o.Risks = 100
		}
	}
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Report is the JSON written under bench/results; bench/results/README.md
// explains every field.
type Report struct {
	StartedAt   time.Time  `json:"startedAt"`
	Quick       bool       `json:"quick"`
	Seconds     float64    `json:"secondsPerScenario"`
	Concurrency int        `json:"concurrency"`
	Machine     Machine    `json:"machine"`
	Postgres    Postgres   `json:"postgres"`
	Seed        Seed       `json:"seed"`
	Scenarios   []Scenario `json:"scenarios"`
	API         Process    `json:"api"`
	Worker      Process    `json:"worker"`
	// Citus is the -citus phase, absent without it.
	Citus *CitusPhase `json:"citus,omitempty"`
}

type Machine struct {
	CPUs      int     `json:"cpus"`
	MemoryGiB float64 `json:"memoryGiB"`
	GoVersion string  `json:"goVersion"`
	GOOS      string  `json:"goos"`
	GOARCH    string  `json:"goarch"`
}

type Postgres struct {
	Version      string `json:"version"`
	Source       string `json:"source"`
	PgbenchScale int    `json:"pgbenchScale"`
	PoolMaxConns int    `json:"poolMaxConns"`
}

type Seed struct {
	Projects int     `json:"projects"`
	Tasks    int     `json:"tasks"`
	Risks    int     `json:"risks"`
	Seconds  float64 `json:"seconds"`
}

type Process struct {
	PeakRSSMiB float64 `json:"peakRssMiB"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

// Scenario is one row of the table.
type Scenario struct {
	Name        string  `json:"name"`
	Mode        string  `json:"mode"` // closed-loop or constant-rate
	Concurrency int     `json:"concurrency,omitempty"`
	TargetRate  float64 `json:"targetRate,omitempty"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	Non2xx      int     `json:"non2xx"`
	FirstError  string  `json:"firstError,omitempty"`
	Seconds     float64 `json:"seconds"`
	RPS         float64 `json:"rps"`
	P50ms       float64 `json:"p50ms"`
	P99ms       float64 `json:"p99ms"`
	P999ms      float64 `json:"p999ms"`
	Reference   string  `json:"reference,omitempty"`
	RefValue    float64 `json:"referenceValue,omitempty"`
	Ratio       float64 `json:"ratio,omitempty"`
	// API, worker and pmbench (load generator and receiver) CPU seconds per
	// 1,000 successful requests.
	APICPUPer1k     float64 `json:"apiCpuSecondsPer1000"`
	WorkerCPUPer1k  float64 `json:"workerCpuSecondsPer1000"`
	PmbenchCPUPer1k float64 `json:"pmbenchCpuSecondsPer1000"`
	// The system (kernel) part of APICPUPer1k and of PostgresCPUPer1k: on
	// one machine a send over loopback TCP runs the receiver's network stack
	// too, so this part is the transport's more than either party's code.
	APISystemCPUPer1k      float64 `json:"apiSystemCpuSecondsPer1000"`
	PostgresSystemCPUPer1k float64 `json:"postgresSystemCpuSecondsPer1000,omitempty"`
	// The whole PostgreSQL cluster's CPU seconds per 1,000 requests (0 when
	// the server is not on this machine), and the reference's: PostgreSQL's
	// and pgbench's own per 1,000 transactions.
	PostgresCPUPer1k    float64 `json:"postgresCpuSecondsPer1000,omitempty"`
	RefPostgresCPUPer1k float64 `json:"referencePostgresCpuSecondsPer1000,omitempty"`
	// RefPostgresSystemCPUPer1k is the system part of RefPostgresCPUPer1k.
	RefPostgresSystemCPUPer1k float64 `json:"referencePostgresSystemCpuSecondsPer1000,omitempty"`
	RefClientCPUPer1k         float64 `json:"referenceClientCpuSecondsPer1000,omitempty"`
	// Perf is what -perf sampled of each party: how much of its CPU was in
	// the kernel, and of that in the receive path it ran for its peers.
	Perf *PerfSplit `json:"perf,omitempty"`
	// On Citus: PostgresCPUPer1k per node (the coordinator first; their sum
	// is PostgresCPUPer1k), and how often the logs of pmapi serve and work
	// mentioned the multi-shard guard's error during the phase.
	PostgresNodesCPUPer1k []float64 `json:"postgresNodesCpuSecondsPer1000,omitempty"`
	MultiShardErrors      *int      `json:"multiShardErrors,omitempty"`
	// Deliveries (deliver scenarios only).
	Deliveries      int     `json:"deliveries,omitempty"`
	DeliveriesPerS  float64 `json:"deliveriesPerSecond,omitempty"`
	BadSignatures   int     `json:"badSignatures,omitempty"`
	RawClientPerS   float64 `json:"rawClientPerSecond,omitempty"`
	RatioRawClient  float64 `json:"ratioRawClient,omitempty"`
	TpcbTPS         float64 `json:"tpcbTps,omitempty"`
	RatioTpcb       float64 `json:"ratioTpcb,omitempty"`
	CommitToRcptP50 float64 `json:"commitToReceiptP50ms,omitempty"`
	CommitToRcptP99 float64 `json:"commitToReceiptP99ms,omitempty"`
	CommitToRcptMax float64 `json:"commitToReceiptMaxMs,omitempty"`
	Undelivered     int     `json:"undelivered,omitempty"`
	// River jobs (fan-outs, deliveries) left waiting after the phase and
	// deleted so the next phase starts clean.
	BacklogDiscarded int `json:"backlogDiscarded,omitempty"`
	// Statements (-statements; write and deliver) is pg_stat_statements per
	// successful request, per delivery in the deliver scenario.
	Statements    []Statement `json:"statements,omitempty"`
	statementRows []statementRow
	// Server is what the cluster did besides the statements (single node):
	// WAL, checkpoints, the hot tables' dead rows and vacuums, and with
	// -statements the backends' wait events and the oldest snapshot.
	Server *ServerStats `json:"server,omitempty"`
}

// run sets everything up, runs every scenario (and with -citus the Citus
// phase after them) and writes the JSON. The report holds what was measured
// even when a later step failed.
func run(ctx context.Context, o options) (*Report, string, error) {
	o.defaults()
	rep := &Report{StartedAt: time.Now().UTC(), Quick: o.Quick, Seconds: o.Duration.Seconds(), Concurrency: o.Concurrency,
		Machine: Machine{
			CPUs:      runtime.NumCPU(),
			MemoryGiB: memTotalGiB(),
			GoVersion: runtime.Version(),
			GOOS:      runtime.GOOS,
			GOARCH:    runtime.GOARCH,
		}}
	if o.Citus {
		// Before the single node's minutes, not after them.
		if err := pgcluster.CitusAvailable(); err != nil {
			return nil, "", fmt.Errorf("-citus: %w", err)
		}
	}
	if o.Pmapi == "" {
		dir, err := os.MkdirTemp("", "pmbench-bin-")
		if err != nil {
			return nil, "", err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(o.Log, "pmbench: building pmapi with -trimpath -ldflags \"-s -w\"")
		if o.Pmapi, err = rig.Build(ctx, dir); err != nil {
			return nil, "", err
		}
	}
	b, err := newBench(ctx, o, false, &rep.Scenarios)
	if err != nil {
		return nil, "", err
	}
	rep.Postgres = Postgres{
		Version:      b.cl.version,
		Source:       b.cl.srv.Source,
		PgbenchScale: o.Scale,
		PoolMaxConns: o.PoolMaxConns,
	}
	rep.Seed = b.seed
	err = b.runAll(ctx)
	rep.API, rep.Worker = b.processes()
	b.close()
	if err == nil && o.Citus {
		err = runCitusPhase(ctx, o, rep)
	}
	path, werr := writeReport(o.OutDir, rep)
	if err == nil {
		err = werr
	}
	return rep, path, err
}

func writeReport(dir string, rep *Report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, rep.StartedAt.Format("20060102T150405Z")+".json")
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

func memTotalGiB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return float64(int(kb/1024/1024*10)) / 10
		}
	}
	return 0
}

func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(
		w,
		"\npmbench %s: %d CPUs, %.1f GiB, PostgreSQL %s (%s), %s per scenario, concurrency %d, %d tasks\n\n",
		rep.StartedAt.Format(
			time.RFC3339,
		),
		rep.Machine.CPUs,
		rep.Machine.MemoryGiB,
		rep.Postgres.Version,
		rep.Postgres.Source,
		time.Duration(rep.Seconds*float64(time.Second)),
		rep.Concurrency,
		rep.Seed.Tasks,
	)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tmode\treq/s\terrors\tp50 ms\tp99 ms\tp99.9 ms\treference\tref/s\tratio\t")
	for _, s := range rep.Scenarios {
		mode := s.Mode
		if s.TargetRate > 0 {
			mode = fmt.Sprintf("%.0f/s", s.TargetRate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n", s.Name, mode, s.RPS, s.Errors,
			s.P50ms, s.P99ms, s.P999ms, dash(s.Reference), num(s.RefValue, "%.0f"), num(s.Ratio, "%.2f"))
	}
	tw.Flush()
	// Where the machine's CPU went, per request (or per reference
	// transaction): on a small machine the processes share the same cores.
	fmt.Fprintln(w, "\nCPU microseconds per request (per transaction for the reference)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(
		tw,
		"scenario\tpmapi serve\tpmapi work\tpmbench\tpostgres\ttotal\t\treference: postgres\tpgbench\ttotal\t",
	)
	for _, s := range rep.Scenarios {
		total := s.APICPUPer1k + s.WorkerCPUPer1k + s.PmbenchCPUPer1k + s.PostgresCPUPer1k
		refTotal := s.RefPostgresCPUPer1k + s.RefClientCPUPer1k
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%s\t%.0f\t\t%s\t%s\t%s\t\n", s.Name, s.APICPUPer1k*1000, s.WorkerCPUPer1k*1000,
			s.PmbenchCPUPer1k*1000, num(s.PostgresCPUPer1k*1000, "%.0f"), total*1000,
			num(s.RefPostgresCPUPer1k*1000, "%.0f"), num(s.RefClientCPUPer1k*1000, "%.0f"), num(refTotal*1000, "%.0f"))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nOf which system (kernel) time, CPU microseconds per request: user = total - system")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpmapi serve system\tuser\tpostgres system\tuser\t\treference: postgres system\tuser\t")
	for _, s := range rep.Scenarios {
		fmt.Fprintf(
			tw,
			"%s\t%.0f\t%.0f\t%s\t%s\t\t%s\t%s\t\n",
			s.Name,
			s.APISystemCPUPer1k*1000,
			(s.APICPUPer1k-s.APISystemCPUPer1k)*1000,
			num(s.PostgresSystemCPUPer1k*1000, "%.0f"),
			userPart(s.PostgresCPUPer1k, s.PostgresSystemCPUPer1k),
			num(s.RefPostgresSystemCPUPer1k*1000, "%.0f"),
			userPart(s.RefPostgresCPUPer1k, s.RefPostgresSystemCPUPer1k),
		)
	}
	tw.Flush()
	printKernelSplit(w, rep.Scenarios)
	for _, s := range rep.Scenarios {
		if s.Deliveries > 0 || strings.HasPrefix(s.Name, "deliver") {
			fmt.Fprintf(
				w,
				"%s: %d deliveries, %.0f/s; raw client %.0f/s (ratio %.2f); tpcb-like %.0f tps (ratio %.2f); "+
					"commit-to-receipt p50 %.1f ms, p99 %.1f ms, max %.1f ms; undelivered %d, bad signatures %d\n",
				s.Name,
				s.Deliveries,
				s.DeliveriesPerS,
				s.RawClientPerS,
				s.RatioRawClient,
				s.TpcbTPS,
				s.RatioTpcb,
				s.CommitToRcptP50,
				s.CommitToRcptP99,
				s.CommitToRcptMax,
				s.Undelivered,
				s.BadSignatures,
			)
		}
		if s.BacklogDiscarded > 0 {
			fmt.Fprintf(
				w,
				"%s: %d River jobs the workers had not reached after the phase were discarded\n",
				s.Name,
				s.BacklogDiscarded,
			)
		}
		if s.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", s.Name, s.FirstError)
		}
	}
	for _, s := range rep.Scenarios {
		printStatements(w, s)
		printServerStats(w, s)
	}
	fmt.Fprintf(w, "pmapi serve: peak RSS %.1f MiB, %.1f CPU s; pmapi work: peak RSS %.1f MiB, %.1f CPU s\n",
		rep.API.PeakRSSMiB, rep.API.CPUSeconds, rep.Worker.PeakRSSMiB, rep.Worker.CPUSeconds)
	if rep.Citus != nil {
		printCitus(w, rep)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// userPart is total less its system part, in microseconds, or "-" when
// there is no total.
func userPart(total, system float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", (total-system)*1000)
}

func num(v float64, f string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(f, v)
}
