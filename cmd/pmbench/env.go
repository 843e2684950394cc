package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/rig"
	"github.com/pmapi/pmapi/migrations"
)

// cluster is the PostgreSQL server of one run: pmapi's database and, on the
// single node, pgbench's beside it, so every reference is measured on the same
// server. With -citus a second cluster follows: a coordinator and two workers.
type cluster struct {
	srv      *pgcluster.Server
	db       pgcluster.Database
	pgbURL   string // pgbench's own role and database (single node only)
	pgbName  string
	version  string
	adminURL string
	// nodes are the servers' host:port, the coordinator first; postmasters
	// their postmasters' pids (0 for one not on this machine).
	nodes       []string
	postmasters []int
	// citusVersion and shardCount are set on Citus (the extension's version
	// and the shards of the tasks table).
	citusVersion string
	shardCount   int
}

const pgbenchRole = "pmbench_pgbench"

func startCluster(ctx context.Context, log io.Writer, statements bool) (*cluster, error) {
	opts := pgcluster.Options{Durable: true, Log: log}
	if statements {
		opts.Preload = []string{"pg_stat_statements"}
	}
	srv, err := pgcluster.FromEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	c, err := provision(ctx, srv, 0)
	if err != nil {
		return nil, err
	}
	if statements {
		if err := statementsExtension(ctx, c.db.AdminURL, c.db.Name); err != nil {
			c.stop()
			return nil, fmt.Errorf(
				"-statements needs pg_stat_statements preloaded (a cluster pmbench launches has it; a server at "+
					"PMAPI_DATABASE_URL needs shared_preload_libraries): %w",
				err,
			)
		}
	}
	// pgbench runs as a role of its own (not a superuser) in a database of its own.
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	c.pgbName = "pmbench_pgb_" + stamp
	password := pmapi.RandomBase62(24)
	conn, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		c.stop()
		return nil, err
	}
	defer conn.Close(ctx)
	var exists bool
	err = conn.QueryRow(ctx, "select exists(select 1 from pg_roles where rolname = $1)", pgbenchRole).Scan(&exists)
	if err != nil {
		c.stop()
		return nil, err
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	quoted := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	for _, stmt := range []string{
		verb + " ROLE " + pgbenchRole + " LOGIN NOSUPERUSER PASSWORD " + quoted,
		"CREATE DATABASE " + c.pgbName + " OWNER " + pgbenchRole,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			c.stop()
			return nil, fmt.Errorf("%s: %w", strings.Fields(stmt)[0]+" "+strings.Fields(stmt)[1], err)
		}
	}
	u, err := urlWith(srv.AdminURL, pgbenchRole, password, c.pgbName)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.pgbURL = u
	return c, nil
}

// startCitus launches a coordinator and two workers from the machine's
// binaries, as `pmapi devdb --citus` does (never PMAPI_DATABASE_URL, which is
// the single node's), and migrates pmapi's database there: the migrations
// distribute the schema, shards tables a table (0: Citus's default, 32). The
// server role gets the multi-shard guard of the test harness, so a statement
// that reaches more than one shard fails, and the run counts it.
func startCitus(ctx context.Context, log io.Writer, durable bool, shards int) (*cluster, error) {
	srv, err := pgcluster.Start(ctx, pgcluster.Options{Citus: true, Durable: durable, Log: log})
	if err != nil {
		return nil, err
	}
	c, err := provision(ctx, srv, shards)
	if err != nil {
		return nil, err
	}
	if err := pgcluster.GuardMultiShard(ctx, srv.AdminURL, c.db.Name); err != nil {
		c.stop()
		return nil, err
	}
	if err := c.checkCitus(ctx); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

var citusVersionRE = regexp.MustCompile(`^Citus ([0-9][^ ]*)`)

// checkCitus reads the release and the shard count, and checks as the server
// role that its sessions have what the run relies on: the multi-shard guard,
// and SET LOCAL reaching the workers.
func (c *cluster) checkCitus(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.db.AppURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var version, guard, propagate string
	if err := conn.QueryRow(ctx, `select citus_version(), current_setting('citus.multi_task_query_log_level'),
		current_setting('citus.propagate_set_commands')`).Scan(&version, &guard, &propagate); err != nil {
		return err
	}
	if m := citusVersionRE.FindStringSubmatch(version); m != nil {
		c.citusVersion = m[1]
	} else {
		c.citusVersion = version
	}
	if guard != "error" || propagate != "local" {
		return fmt.Errorf(
			"the server role has citus.multi_task_query_log_level = %q and citus.propagate_set_commands = %q, want "+
				"error and local",
			guard,
			propagate,
		)
	}
	err = conn.QueryRow(ctx, "select shard_count from citus_tables where table_name = 'tasks'::regclass").
		Scan(&c.shardCount)
	if err != nil {
		return fmt.Errorf("the tasks table is not distributed: %w", err)
	}
	return nil
}

// provision makes pmapi's roles and a migrated database on srv (on every node
// of a Citus cluster; shards > 0 sets citus.shard_count for the migrations)
// and finds every node's postmaster.
func provision(ctx context.Context, srv *pgcluster.Server, shards int) (*cluster, error) {
	c := &cluster{srv: srv, adminURL: srv.AdminURL}
	top, err := pgcluster.Discover(ctx, srv.AdminURL)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.nodes = top.Addresses()
	for _, n := range top.Nodes() {
		c.postmasters = append(c.postmasters, postmasterPID(ctx, n))
	}
	d, err := rig.Provision(ctx, srv, "pmbench_", shards)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.db, c.version = d.Database, d.Version
	return c, nil
}

// postgresCPU is the CPU time of each node's cluster (postgresCPUSeconds),
// the coordinator first.
func (c *cluster) postgresCPU() []float64 { return c.eachNode(postgresCPUSeconds) }

// postgresSystemCPU is the system part of postgresCPU.
func (c *cluster) postgresSystemCPU() []float64 { return c.eachNode(postgresSystemSeconds) }

func (c *cluster) eachNode(seconds func(postmaster int) float64) []float64 {
	out := make([]float64, len(c.postmasters))
	for i, pm := range c.postmasters {
		if pm != 0 {
			out[i] = seconds(pm)
		}
	}
	return out
}

// local says whether every node's CPU time can be read.
func (c *cluster) local() bool {
	for _, pm := range c.postmasters {
		if pm == 0 {
			return false
		}
	}
	return len(c.postmasters) > 0
}

func (c *cluster) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.db.Name != "" {
		_ = pgcluster.DropDatabase(ctx, c.srv.AdminURL, c.db.Name)
	}
	if c.pgbName != "" {
		_ = pgcluster.DropDatabase(ctx, c.srv.AdminURL, c.pgbName)
	}
	_ = c.srv.Stop(ctx)
}

// onEveryNode runs f on a connection to pmapi's database on every node (one
// on a single server; on Citus River's tables are on every node).
func (c *cluster) onEveryNode(ctx context.Context, f func(*pgx.Conn) error) error {
	urls := []string{c.db.AdminURL}
	if len(c.nodes) > 1 {
		urls = urls[:0]
		for _, n := range c.nodes {
			u, err := migrations.OnNode(c.db.AdminURL, n, nil)
			if err != nil {
				return err
			}
			urls = append(urls, u)
		}
	}
	for _, u := range urls {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return err
		}
		err = f(conn)
		conn.Close(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}

// pendingJobs counts River jobs not yet finished in pmapi's database.
func (c *cluster) pendingJobs(ctx context.Context) (int, error) {
	var total int
	err := c.onEveryNode(ctx, func(conn *pgx.Conn) error {
		var n int
		err := conn.QueryRow(ctx, "select count(*) from "+migrations.RiverSchema+
			".river_job where state in ('available', 'running', 'retryable', 'scheduled', 'pending')").Scan(&n)
		total += n
		return err
	})
	return total, err
}

// waitJobsDrained waits, at most within, for the workers to finish the backlog
// (the seed's fan-out jobs), so one scenario's leftovers do not run in the next.
func (c *cluster) waitJobsDrained(ctx context.Context, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		n, err := c.pendingJobs(ctx)
		if err != nil || n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// discardJobs deletes River jobs still waiting, so a scenario that outran the
// workers leaves no backlog to the next one; it returns how many it deleted.
func (c *cluster) discardJobs(ctx context.Context) (int64, error) {
	var total int64
	err := c.onEveryNode(ctx, func(conn *pgx.Conn) error {
		tag, err := conn.Exec(ctx, "delete from "+migrations.RiverSchema+
			".river_job where state in ('available', 'retryable', 'scheduled', 'pending')")
		total += tag.RowsAffected()
		return err
	})
	return total, err
}

// peakRSSMB is VmHWM (the resident set's high-water mark) in MiB.
func peakRSSMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func urlWith(base, user, password, db string) (string, error) {
	d, err := pgcluster.Describe(base, db)
	if err != nil {
		return "", err
	}
	// Describe gives the database's admin URL; swap in pgbench's role.
	u := d.AdminURL
	at := strings.Index(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 {
		return "", fmt.Errorf("unexpected database URL form")
	}
	return u[:scheme+3] + user + ":" + password + u[at:], nil
}
