package pgcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// joinDatabase makes the new, empty database name a Citus database: the
// extension on every node (workers first, since joining them copies metadata
// into theirs), then the coordinator's view of the cluster.
func joinDatabase(ctx context.Context, top Topology, name string) error {
	err := onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		u, err := onDatabase(nodeURL, name)
		if err != nil {
			return err
		}
		return execOn(ctx, u, "create extension if not exists citus")
	})
	if err != nil {
		return err
	}
	return syncNodes(ctx, top, name)
}

// SyncNodes brings the Citus metadata of database name up to date with the
// cluster (node addresses and role passwords change when a persistent cluster
// restarts on new ports). It does nothing on plain PostgreSQL.
func SyncNodes(ctx context.Context, adminURL, name string) error {
	top, err := Discover(ctx, adminURL)
	if err != nil || !top.Citus {
		return err
	}
	return syncNodes(ctx, top, name)
}

// GuardMultiShard makes every statement of the server role in database name
// that would reach more than one shard fail ("multi-task query about to be
// executed"), so a test shows where a query misses its workspace. It is a
// setting of the role in that database only: a shared coordinator's other
// databases keep their behaviour. It is made on every node, since pmapi runs
// a workspace's statements on the node that holds it and Citus does not
// carry a role's per-database settings to the workers. It does nothing on
// plain PostgreSQL.
func GuardMultiShard(ctx context.Context, adminURL, name string) error {
	if !dbNameRE.MatchString(name) {
		return fmt.Errorf("bad database name %q", name)
	}
	top, err := Discover(ctx, adminURL)
	if err != nil || !top.Citus {
		return err
	}
	stmt := fmt.Sprintf("ALTER ROLE %s IN DATABASE %s SET citus.multi_task_query_log_level = 'error'", AppRole, name)
	return onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		return execOn(ctx, nodeURL, stmt)
	})
}

// FreezeAsTemplate renames database from to on every node after closing it to
// connections, so it can be cloned: CREATE DATABASE ... TEMPLATE refuses a
// source anyone is connected to, and Citus keeps a maintenance daemon connected
// to every database that has the extension.
func FreezeAsTemplate(ctx context.Context, adminURL, from, to string) error {
	if !dbNameRE.MatchString(from) || !dbNameRE.MatchString(to) {
		return fmt.Errorf("bad database name %q or %q", from, to)
	}
	top, err := Discover(ctx, adminURL)
	if err != nil {
		return err
	}
	return onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		conn, err := pgx.Connect(ctx, nodeURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH ALLOW_CONNECTIONS false", from)); err != nil {
			return err
		}
		// A terminated backend takes a moment to go; the rename waits for it.
		for attempt := 0; ; attempt++ {
			_, err = conn.Exec(ctx, "select pg_terminate_backend(pid) from pg_stat_activity "+
				"where datname = $1 and pid <> pg_backend_pid()", from)
			if err != nil {
				return err
			}
			_, err = conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", from, to))
			if err == nil || attempt == 50 || !strings.Contains(err.Error(), "being accessed by other users") {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
