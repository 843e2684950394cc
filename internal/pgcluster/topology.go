package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Topology is where a server's databases live: one PostgreSQL server, or a
// Citus coordinator (which clients use) and its workers (which hold the shards).
type Topology struct {
	// Coordinator is the admin URL the topology was discovered from.
	Coordinator string
	// Workers are admin URLs of the worker nodes, with the coordinator's
	// credentials and database: the nodes of one cluster share a superuser.
	Workers []string
	// Citus is true when the server has the extension, even without workers.
	Citus bool
}

// Nodes returns every node's admin URL, the coordinator first.
func (t Topology) Nodes() []string {
	return append([]string{t.Coordinator}, t.Workers...)
}

// Addresses returns every node's host:port, the coordinator first.
func (t Topology) Addresses() []string {
	var out []string
	for _, n := range t.Nodes() {
		if u, err := url.Parse(n); err == nil {
			out = append(out, u.Host)
		}
	}
	return out
}

// Discover reads the topology from the server behind adminURL. A Citus
// coordinator lists its workers in pg_dist_node of the admin URL's database (a
// launched cluster registers them in postgres), so a second process needs no
// more than the URL every process already gets.
func Discover(ctx context.Context, adminURL string) (Topology, error) {
	top := Topology{Coordinator: adminURL}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return top, fmt.Errorf("connect as admin: %w", err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, "select exists(select 1 from pg_extension where extname = 'citus')").Scan(&top.Citus)
	if err != nil || !top.Citus {
		return top, err
	}
	rows, err := conn.Query(ctx, `select nodename, nodeport from pg_dist_node
		where groupid <> 0 and noderole = 'primary' and isactive order by nodeid`)
	if err != nil {
		return top, err
	}
	defer rows.Close()
	base, err := url.Parse(adminURL)
	if err != nil {
		return top, err
	}
	for rows.Next() {
		var host string
		var port int
		if err := rows.Scan(&host, &port); err != nil {
			return top, err
		}
		w := *base
		w.Host = net.JoinHostPort(host, strconv.Itoa(port))
		top.Workers = append(top.Workers, w.String())
	}
	return top, rows.Err()
}

// syncNodes points the Citus metadata of database name at the cluster as it is
// now: the coordinator's address, every worker, and on every node the passwords
// Citus uses to reach the others as each role (the coordinator connects as the
// client's role; a shard move's subscription on one worker connects to another
// as the extension's owner, with the password from that worker's own table). A
// restarted persistent cluster has new ports and role passwords, so this runs on
// every start, not only when a database is made.
//
// Citus may end the session that changes pg_dist_node (citus_update_node
// terminates backends whose locks conflict with the move, and its maintenance
// daemon reacts to the new metadata), which showed as "conn closed" once in
// make test-citus; the metadata is read again each time, so a run that lost
// its connection is simply run again on a new one.
//
// Reaching a worker can also fail for a moment: make test-citus once saw
// "failure on connection marked as essential" from citus_add_node while four
// test packages set up their databases on the same three nodes, and the
// package failed before any test ran. Citus rolls the join back, so after a
// pause the run goes again and joins what is still missing. And a freshly
// restarted node may drop a connection before it settles ("unexpected EOF"
// from the first sync after a restart, once in make test); that run goes
// again too.
func syncNodes(ctx context.Context, top Topology, name string) error {
	for attempt := 1; ; attempt++ {
		err := syncNodesOnce(ctx, top, name)
		if err == nil || attempt == 3 || !syncAgain(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}

// syncAgain tells the failures of a sync that a new run can get past: the
// session or a connection lost under it, or Citus unable to reach a node.
// Any other error (a statement refused, a bad address) is final.
func syncAgain(err error) bool {
	return errors.Is(err, errSessionEnded) || errors.Is(err, errNodeUnreachable) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET)
}

var (
	// errSessionEnded marks a syncNodesOnce whose coordinator session was
	// closed under it.
	errSessionEnded = errors.New("the coordinator ended the session")
	// errNodeUnreachable marks a join or a move that failed on Citus's
	// connection to a node (isEssentialConnectionFailure).
	errNodeUnreachable = errors.New("the coordinator could not reach a node")
)

// isEssentialConnectionFailure tells Citus's error for a metadata connection
// to a node that failed (its message names no cause; citusdata/citus#5515).
func isEssentialConnectionFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "XX000" &&
		strings.HasPrefix(pgErr.Message, "failure on connection marked as essential")
}

func syncNodesOnce(ctx context.Context, top Topology, name string) error {
	want, err := nodeAddresses(top)
	if err != nil {
		return err
	}
	// Joining or moving a node copies the metadata to the workers, over
	// connections that already need these passwords; so they come first.
	err = onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		conn, err := connectTo(ctx, nodeURL, name)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return writeAuthinfo(ctx, conn, top)
	})
	if err != nil {
		return err
	}
	conn, err := connectTo(ctx, top.Coordinator, name)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `select nodeid, nodename, nodeport from pg_dist_node
		where noderole = 'primary' order by groupid <> 0, nodeid`)
	if err != nil {
		return err
	}
	known, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (address, error) {
		var a address
		return a, r.Scan(&a.id, &a.host, &a.port)
	})
	if err != nil {
		return err
	}
	if len(known) == 0 {
		// A new database: the coordinator, then each worker joined in turn.
		if _, err := conn.Exec(ctx, "select citus_set_coordinator_host($1, $2)", want[0].host, want[0].port); err != nil {
			return err
		}
		known = append(known, want[0])
	}
	// Nodes keep their order across restarts (coordinator, worker1, worker2),
	// so the i-th known node is the i-th node now, perhaps on a new port.
	// Moving one with metadata sync on would first try to reach the workers at
	// their old ports; so the moves stay local and one resync follows.
	var moves []string
	for i, a := range known {
		if i >= len(want) || a.host == want[i].host && a.port == want[i].port {
			continue
		}
		host, port := quoteLiteral(want[i].host), want[i].port
		if i == 0 {
			moves = append(moves, fmt.Sprintf("select citus_set_coordinator_host(%s, %d)", host, port))
		} else {
			moves = append(moves, fmt.Sprintf("select citus_update_node(%d, %s, %d)", a.id, host, port))
		}
	}
	if len(moves) > 0 {
		stmts := append(append([]string{"set citus.enable_metadata_sync = off"}, moves...),
			"reset citus.enable_metadata_sync", "select start_metadata_sync_to_all_nodes()")
		for _, st := range stmts {
			if _, err := conn.Exec(ctx, st); err != nil {
				if conn.IsClosed() {
					err = fmt.Errorf("%w: %w", errSessionEnded, err)
				} else if isEssentialConnectionFailure(err) {
					err = fmt.Errorf("%w: %w", errNodeUnreachable, err)
				}
				return fmt.Errorf("move the cluster's nodes to their new ports: %w", err)
			}
		}
	}
	for _, w := range want[min(len(known), len(want)):] {
		if _, err := conn.Exec(ctx, "select citus_add_node($1, $2)", w.host, w.port); err != nil {
			if isEssentialConnectionFailure(err) {
				err = fmt.Errorf("%w: %w", errNodeUnreachable, err)
			}
			return fmt.Errorf("join worker %s:%d: %w", w.host, w.port, err)
		}
	}
	return nil
}

// address is a node's place in pg_dist_node (id 0 when not read from there).
type address struct {
	id   int32
	host string
	port int32
}

func nodeAddresses(top Topology) ([]address, error) {
	var out []address
	for _, n := range top.Nodes() {
		u, err := url.Parse(n)
		if err != nil {
			return nil, err
		}
		host, portText, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, err
		}
		port, err := strconv.Atoi(portText)
		if err != nil {
			return nil, err
		}
		out = append(out, address{host: host, port: int32(port)})
	}
	return out, nil
}

// writeAuthinfo stores the passwords of the extension's owner and pmapi's roles
// for every node, for those roles that exist (a check of the table's): pmapi's
// are made before its databases, not before the cluster.
func writeAuthinfo(ctx context.Context, conn *pgx.Conn, top Topology) error {
	coord, err := url.Parse(top.Coordinator)
	if err != nil {
		return err
	}
	superPassword, _ := coord.User.Password()
	b := &pgx.Batch{}
	b.Queue(
		"delete from pg_dist_authinfo where nodeid = 0 and rolename in ($1, $2, $3)",
		coord.User.Username(),
		OwnerRole,
		AppRole,
	)
	b.Queue(`insert into pg_dist_authinfo (nodeid, rolename, authinfo)
		select 0, r, a from (values ($1::name, $2::text), ($3, $4), ($5, $6)) v (r, a)
		where exists (select 1 from pg_roles where rolname = r)`,
		coord.User.Username(), "password="+superPassword,
		OwnerRole, "password="+rolePassword(top.Coordinator, OwnerRole),
		AppRole, "password="+rolePassword(top.Coordinator, AppRole))
	return conn.SendBatch(ctx, b).Close()
}

// onEach runs fn for every node URL at once (i is the URL's index) and joins
// their errors.
func onEach(ctx context.Context, urls []string, fn func(ctx context.Context, i int, nodeURL string) error) error {
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(ctx, i, u)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// execOn runs statements in order on one connection to nodeURL.
func execOn(ctx context.Context, nodeURL string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, nodeURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// onDatabase returns nodeURL pointed at database name.
func onDatabase(nodeURL, name string) (string, error) {
	u, err := url.Parse(nodeURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// connectTo connects to database name on the node at nodeURL.
func connectTo(ctx context.Context, nodeURL, name string) (*pgx.Conn, error) {
	u, err := onDatabase(nodeURL, name)
	if err != nil {
		return nil, err
	}
	return pgx.Connect(ctx, u)
}
