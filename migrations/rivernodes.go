package migrations

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// River on a Citus cluster: its tables are local to each node, the
// coordinator and every worker, so a job commits in the local transaction of
// the change that queued it on the node that holds the workspace
// (docs/decisions/tenancy-and-citus.md). They are made with Citus's DDL
// propagation off: a worker refuses DDL on objects Citus distributes, and
// River's type and function would otherwise be copied from the coordinator to
// every node, where River's own migrations then fail on them.

// jobIDBits is how many bits of a River job id count jobs within one node:
// node group g numbers its jobs from g<<jobIDBits, so a job id names one job
// in the whole cluster (events, subscriptions and the sweeper keep job ids),
// 17.6 trillion jobs a node, and up to 511 groups stay below 2^53, which
// JavaScript clients of River UI read exactly.
const jobIDBits = 44

// riverOn makes River's schema, tables and grants on one node (group 0: the
// coordinator, or a plain PostgreSQL), and on Citus gives the node its range
// of job ids.
func riverOn(ctx context.Context, ownerURL string, citus bool, group int32) error {
	cfg, err := pgxpool.ParseConfig(ownerURL)
	if err != nil {
		return err
	}
	cfg.MaxConns, cfg.MinConns = 2, 0
	if citus {
		cfg.ConnConfig.RuntimeParams["citus.enable_ddl_propagation"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if citus && group != 0 {
		// A worker's River schema without River's job table is what Citus
		// copied there from a coordinator that made River's schema with DDL
		// propagation on (pmapi before River ran on every node), or what a
		// failed first run left: nothing of River's lives in it yet.
		if _, err := conn.Exec(ctx, `do $$ begin
			if to_regnamespace('`+RiverSchema+`') is not null and to_regclass('`+RiverSchema+`.river_job') is null then
				drop schema `+RiverSchema+` cascade;
			end if; end $$`); err != nil {
			return fmt.Errorf("clear River's schema of what Citus copied: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, "create schema if not exists "+RiverSchema); err != nil {
		return err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: RiverSchema})
	if err != nil {
		return err
	}
	if err := migrateRiver(ctx, conn.Conn(), migrator); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, riverGrants); err != nil {
		return err
	}
	if !citus {
		return nil
	}
	lo, hi := max(int64(group)<<jobIDBits, 1), (int64(group)+1)<<jobIDBits-1
	_, err = conn.Exec(ctx, fmt.Sprintf(`do $$ begin
		if (select last_value from %[1]s.river_job_id_seq) < %[2]d then
			alter sequence %[1]s.river_job_id_seq minvalue %[2]d maxvalue %[3]d start with %[2]d restart with %[2]d;
		else
			alter sequence %[1]s.river_job_id_seq minvalue %[2]d maxvalue %[3]d start with %[2]d;
		end if; end $$`, RiverSchema, lo, hi))
	if err != nil {
		return fmt.Errorf("job ids of node group %d: %w", group, err)
	}
	return nil
}

// riverOnWorkers runs riverOn on every active primary worker of the cluster
// whose coordinator conn is connected to, reached with ownerURL on the
// worker's host and port (or its entry in addrs).
func riverOnWorkers(ctx context.Context, conn *pgx.Conn, ownerURL string, addrs map[string]string) error {
	rows, err := conn.Query(ctx, `select groupid, nodename, nodeport from pg_dist_node
		where groupid <> 0 and noderole = 'primary' and isactive order by groupid`)
	if err != nil {
		return err
	}
	type worker struct {
		group int32
		addr  string
	}
	workers, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (worker, error) {
		var w worker
		var host string
		var port int32
		err := r.Scan(&w.group, &host, &port)
		w.addr = net.JoinHostPort(host, strconv.Itoa(int(port)))
		return w, err
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, w := range workers {
		nodeURL, err := OnNode(ownerURL, w.addr, addrs)
		if err == nil {
			err = riverOn(ctx, nodeURL, true, w.group)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("river tables on worker %s: %w", w.addr, err))
		}
	}
	return errors.Join(errs...)
}

// OnNode returns a URL for the database of dbURL on the Citus node named addr
// (host:port as pg_dist_node has it), reached at addrs[addr] when set.
func OnNode(dbURL, addr string, addrs map[string]string) (string, error) {
	if a, ok := addrs[addr]; ok {
		addr = a
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("a Citus node is reached with the URL form (postgres://...), not %q", u.Scheme)
	}
	u.Host = addr
	return u.String(), nil
}

// CheckRiver returns an error unless River's newest migration is applied on
// the node behind q: a routed shard sends a workspace's jobs to River's
// tables on the node that holds it.
func CheckRiver(ctx context.Context, q querier) error {
	latest, err := latestRiverVersion()
	if err != nil {
		return err
	}
	var ok bool
	if err := q.QueryRow(ctx, `select to_regclass('`+RiverSchema+`.river_migration') is not null and exists(
		select 1 from `+RiverSchema+`.river_migration where line = 'main' and version = $1)`, latest).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("river migration %d is not applied on this node; run pmapi migrate up", latest)
	}
	return nil
}
