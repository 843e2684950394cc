package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// CitusPhase is the -citus part of a run: the same workspace seeded on a Citus
// cluster, the compared scenarios run there, and their ratios to the single
// node's of the same run.
type CitusPhase struct {
	Version string `json:"version"`
	// Routing is PMAPI_CITUS_ROUTING (workspaces' transactions on their
	// nodes); PlanCache whether routed statements keep generic plans, as
	// pmapi decides it from PMAPI_CITUS_PLAN_CACHE and the release.
	Routing   bool `json:"routing"`
	PlanCache bool `json:"planCache"`
	// Nodes are host:port, the coordinator first (the per-node CPU follows
	// this order).
	Nodes           []string `json:"nodes"`
	ShardCount      int      `json:"shardCount"`
	TenantSetting   string   `json:"tenantSetting"`
	MultiShardGuard bool     `json:"multiShardGuard"`
	Durable         bool     `json:"durable"`
	// SetupSeconds is the cluster's start, pmapi's database on every node and
	// the migrations that distribute it; Seconds the whole phase.
	SetupSeconds float64      `json:"setupSeconds"`
	Seconds      float64      `json:"seconds"`
	Seed         Seed         `json:"seed"`
	Scenarios    []Scenario   `json:"scenarios"`
	Comparison   []Comparison `json:"comparison"`
	API          Process      `json:"api"`
	Worker       Process      `json:"worker"`
	// MultiShardErrors counts the guard's error in the logs of pmapi serve
	// and work over the whole phase (seed and settling included), read once
	// both had stopped.
	MultiShardErrors int    `json:"multiShardErrors"`
	Error            string `json:"error,omitempty"`
}

// Comparison is one scenario's Citus figure over the single node's. A CPU ratio
// is left out when the single node's figure is under minCPUPer1k.
type Comparison struct {
	Scenario         string  `json:"scenario"`
	RPSRatio         float64 `json:"rpsRatio"`
	P50Ratio         float64 `json:"p50Ratio"`
	P99Ratio         float64 `json:"p99Ratio"`
	APICPURatio      float64 `json:"apiCpuRatio,omitempty"`
	WorkerCPURatio   float64 `json:"workerCpuRatio,omitempty"`
	PmbenchCPURatio  float64 `json:"pmbenchCpuRatio,omitempty"`
	PostgresCPURatio float64 `json:"postgresCpuRatio,omitempty"`
	TotalCPURatio    float64 `json:"totalCpuRatio,omitempty"`
	// NodesPostgresCPURatio is each node's PostgreSQL CPU per request over
	// the single node's whole PostgreSQL CPU per request, the coordinator
	// first: its first value is the coordinator's share of one node's cost.
	NodesPostgresCPURatio []float64 `json:"nodesPostgresCpuRatio,omitempty"`
}

// minCPUPer1k is 5 µs a request: below it (pmapi work during reads) a ratio
// says nothing.
const minCPUPer1k = 0.005

// errCitusPhase marks an error of the Citus phase, after the single node's
// figures were taken.
var errCitusPhase = errors.New("citus phase")

// runCitusPhase starts the Citus world, runs the compared scenarios there and
// fills rep.Citus, also with what it measured before a failure.
func runCitusPhase(ctx context.Context, o options, rep *Report) (err error) {
	t0 := time.Now()
	ph := &CitusPhase{TenantSetting: "set_local", MultiShardGuard: true, Durable: !o.citusNotDurable}
	rep.Citus = ph
	defer func() {
		ph.Seconds = time.Since(t0).Seconds()
		if err != nil {
			ph.Error = err.Error()
			err = fmt.Errorf("%w: %w", errCitusPhase, err)
		}
	}()
	b, err := newBench(ctx, o, true, &ph.Scenarios)
	if err != nil {
		return err
	}
	ph.Version, ph.Nodes, ph.ShardCount, ph.SetupSeconds = b.cl.citusVersion, b.cl.nodes, b.cl.shardCount, b.setupSeconds
	ph.Routing, ph.PlanCache = routingOn(), planCacheOn(ctx, b.cl.db.AdminURL, b.cl.nodes, b.cl.citusVersion)
	ph.Seed = b.seed
	splitErr := b.runCitus(ctx, rep.Scenarios)
	ph.API, ph.Worker = b.processes()
	b.close()
	ph.Comparison = compare(rep.Scenarios, ph.Scenarios)
	if ph.MultiShardErrors = b.serve.Log.MultiShardErrors() + b.work.Log.MultiShardErrors(); ph.MultiShardErrors > 0 {
		return fmt.Errorf(
			"pmapi's logs mention the multi-shard guard's error %d times: a statement reached more than one shard",
			ph.MultiShardErrors,
		)
	}
	if splitErr != nil {
		return splitErr
	}
	return ctx.Err()
}

// routingOn is PMAPI_CITUS_ROUTING as pmapi reads it (on unless false).
func routingOn() bool {
	on, err := strconv.ParseBool(cmp.Or(os.Getenv("PMAPI_CITUS_ROUTING"), "true"))
	return err == nil && on
}

// planCacheOn is whether pmapi keeps generic plans on routed nodes, decided
// as pmapi decides it: PMAPI_CITUS_PLAN_CACHE, and when auto a probe of the
// first node (after the coordinator, which holds no shards) that can answer,
// else the release version (as citus_version() starts: "13.2.2").
func planCacheOn(ctx context.Context, adminURL string, nodes []string, version string) bool {
	p, err := tenant.ParsePlanCache(os.Getenv("PMAPI_CITUS_PLAN_CACHE"))
	if err != nil {
		return false
	}
	if p != tenant.PlanCacheAuto {
		return p.Allows("Citus " + version)
	}
	for _, addr := range rest(nodes) {
		cfg, err := pgx.ParseConfig(adminURL)
		if err != nil {
			break
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			continue
		}
		cfg.Host, cfg.Port, cfg.Fallbacks = host, uint16(n), nil
		if works, err := tenant.ProbeLocalPlanCache(ctx, cfg); err == nil {
			return works
		}
	}
	return p.Allows("Citus " + version)
}

// compare pairs each Citus scenario with the single node's of the same name.
func compare(single, citus []Scenario) []Comparison {
	var out []Comparison
	for _, c := range citus {
		for _, s := range single {
			if s.Name != baseScenario(c.Name) {
				continue
			}
			cpu := func(c, s float64) float64 {
				if s < minCPUPer1k {
					return 0
				}
				return c / s
			}
			out = append(out, Comparison{Scenario: c.Name,
				RPSRatio: ratio(c.RPS, s.RPS), P50Ratio: ratio(c.P50ms, s.P50ms), P99Ratio: ratio(c.P99ms, s.P99ms),
				APICPURatio: cpu(c.APICPUPer1k, s.APICPUPer1k), WorkerCPURatio: cpu(c.WorkerCPUPer1k, s.WorkerCPUPer1k),
				PmbenchCPURatio: cpu(
					c.PmbenchCPUPer1k,
					s.PmbenchCPUPer1k,
				), PostgresCPURatio: cpu(c.PostgresCPUPer1k, s.PostgresCPUPer1k),
				TotalCPURatio: cpu(totalCPU(c), totalCPU(s))})
			for _, n := range c.PostgresNodesCPUPer1k {
				out[len(out)-1].NodesPostgresCPURatio = append(out[len(out)-1].NodesPostgresCPURatio, cpu(n, s.PostgresCPUPer1k))
			}
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// totalCPU is every party's CPU seconds per 1,000 requests.
func totalCPU(s Scenario) float64 {
	return s.APICPUPer1k + s.WorkerCPUPer1k + s.PmbenchCPUPer1k + s.PostgresCPUPer1k
}

// printCitus prints the comparison: for each scenario the single node's row,
// Citus's, and Citus over the single node.
func printCitus(w io.Writer, rep *Report) {
	ph := rep.Citus
	fmt.Fprintf(w, "\nOne node against Citus %s (coordinator %s, workers %s; %d shards a table; %s; "+
		"routing %s, plan cache %s; multi-shard guard on; fsync %s)\n", ph.Version, first(ph.Nodes),
		strings.Join(rest(ph.Nodes), ", "), ph.ShardCount, ph.TenantSetting,
		onOff(ph.Routing), onOff(ph.PlanCache), onOff(ph.Durable))
	fmt.Fprintf(
		w,
		"Citus phase %.0f s: cluster and migrations %.1f s, seed %.1f s; CPU µs per request; "+
			"postgres on Citus is the three nodes' sum\n\n",
		ph.Seconds,
		ph.SetupSeconds,
		ph.Seed.Seconds,
	)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(
		tw,
		"scenario\ton\tmode\treq/s\tnon-2xx\tmulti-shard\tp50 ms\tp99 ms\t"+
			"serve\twork\tpmbench\tpostgres\ttotal\tcoordinator / workers\t",
	)
	us := func(v float64) string { return fmt.Sprintf("%.0f", v*1000) }
	x := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	for _, c := range ph.Scenarios {
		for _, s := range rep.Scenarios {
			if s.Name != baseScenario(c.Name) {
				continue
			}
			for _, row := range []struct {
				on string
				s  Scenario
			}{{"one node", s}, {"citus", c}} {
				r := row.s
				multi, nodes := "-", "-"
				if r.MultiShardErrors != nil {
					multi = fmt.Sprint(*r.MultiShardErrors)
				}
				if len(r.PostgresNodesCPUPer1k) > 0 {
					var parts []string
					for _, n := range r.PostgresNodesCPUPer1k {
						parts = append(parts, us(n))
					}
					nodes = strings.Join(parts, " / ")
				}
				fmt.Fprintf(
					tw,
					"%s\t%s\t%s\t%.0f\t%d\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
					r.Name,
					row.on,
					modeOf(r),
					r.RPS,
					r.Non2xx,
					multi,
					r.P50ms,
					r.P99ms,
					us(r.APICPUPer1k),
					us(r.WorkerCPUPer1k),
					us(r.PmbenchCPUPer1k),
					num(r.PostgresCPUPer1k*1000, "%.0f"),
					us(totalCPU(r)),
					nodes,
				)
			}
			for _, cp := range ph.Comparison {
				if cp.Scenario == c.Name {
					var nodes []string
					for _, r := range cp.NodesPostgresCPURatio {
						nodes = append(nodes, x(r))
					}
					fmt.Fprintf(tw, "%s\tcitus/one\t\t%s\t\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
						c.Name, x(cp.RPSRatio), x(cp.P50Ratio), x(cp.P99Ratio),
						x(cp.APICPURatio), x(cp.WorkerCPURatio), x(cp.PmbenchCPURatio), x(cp.PostgresCPURatio),
						x(cp.TotalCPURatio), strings.Join(nodes, " / "))
				}
			}
		}
	}
	tw.Flush()
	printTargets(w, ph)
	for _, c := range ph.Scenarios {
		if c.FirstError != "" {
			fmt.Fprintf(w, "citus %s: first error: %s\n", c.Name, c.FirstError)
		}
		if c.BacklogDiscarded > 0 {
			fmt.Fprintf(
				w,
				"citus %s: %d River jobs the workers had not reached after the phase were discarded\n",
				c.Name,
				c.BacklogDiscarded,
			)
		}
	}
	fmt.Fprintf(w, "citus: multi-shard guard errors in pmapi's logs over the whole phase: %d\n", ph.MultiShardErrors)
	fmt.Fprintf(w, "citus: pmapi serve: peak RSS %.1f MiB, %.1f CPU s; pmapi work: peak RSS %.1f MiB, %.1f CPU s\n",
		ph.API.PeakRSSMiB, ph.API.CPUSeconds, ph.Worker.PeakRSSMiB, ph.Worker.CPUSeconds)
	if ph.Error != "" {
		fmt.Fprintf(w, "citus phase failed: %s\n", ph.Error)
	}
}

func modeOf(s Scenario) string {
	if s.TargetRate > 0 {
		return fmt.Sprintf("%.0f/s", s.TargetRate)
	}
	return fmt.Sprintf("closed %d", s.Concurrency)
}

func first(s []string) string {
	if len(s) == 0 {
		return "?"
	}
	return s[0]
}

func rest(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s[1:]
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Targets of the Citus phase (docs/performance.md): PostgreSQL's CPU per
// request at most targetRatio times one node's, and the coordinator's under
// targetCoordinator of one node's.
const (
	targetRatio       = 1.5
	targetCoordinator = 0.10
)

// printTargets says, for the closed loops, how PostgreSQL's CPU per request
// on Citus stands against the targets.
func printTargets(w io.Writer, ph *CitusPhase) {
	fmt.Fprintln(w, "\nTargets: PostgreSQL CPU per request at most 1.5 times one node's, "+
		"the coordinator under 10 % of one node's")
	for _, cp := range ph.Comparison {
		if base := baseScenario(cp.Scenario); base != "read-detail" && base != "write" {
			continue
		}
		if cp.PostgresCPURatio == 0 || len(cp.NodesPostgresCPURatio) == 0 {
			fmt.Fprintf(w, "  %s: no CPU figures\n", cp.Scenario)
			continue
		}
		coord := cp.NodesPostgresCPURatio[0]
		fmt.Fprintf(w, "  %s: PostgreSQL %.2fx one node's (%s), coordinator %.1f %% of one node's (%s)\n", cp.Scenario,
			cp.PostgresCPURatio, met(cp.PostgresCPURatio <= targetRatio), coord*100, met(coord < targetCoordinator))
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
