package tenant_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// wire counts what the server's role sends a node: round trips (a write after
// the answer to the last one), and the statements run (Execute messages) and
// prepared (Parse messages) in them; and what the node says back as notices.
type wire struct {
	mu                        sync.Mutex
	roundTrips, execs, parses int
	notices                   []string
	reading                   bool
	startup                   bool // the untyped startup message is still to come
	pending                   []byte
}

func (w *wire) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roundTrips, w.execs, w.parses, w.notices = 0, 0, 0, nil
}

func (w *wire) counts() (roundTrips, execs, parses int, notices []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.roundTrips, w.execs, w.parses, append([]string(nil), w.notices...)
}

// sent frames what the client wrote into messages and counts them.
func (w *wire) sent(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reading || w.roundTrips == 0 {
		w.roundTrips++
	}
	w.reading = false
	w.pending = append(w.pending, b...)
	for {
		if w.startup {
			if len(w.pending) < 4 {
				return
			}
			n := int(binary.BigEndian.Uint32(w.pending))
			if len(w.pending) < n {
				return
			}
			w.pending, w.startup = w.pending[n:], false
			continue
		}
		if len(w.pending) < 5 {
			return
		}
		n := 1 + int(binary.BigEndian.Uint32(w.pending[1:]))
		if len(w.pending) < n {
			return
		}
		switch w.pending[0] {
		case 'E':
			w.execs++
		case 'P':
			w.parses++
		}
		w.pending = w.pending[n:]
	}
}

func (w *wire) received() {
	w.mu.Lock()
	w.reading = true
	w.mu.Unlock()
}

type countedConn struct {
	net.Conn
	w *wire
}

func (c countedConn) Write(b []byte) (int, error) {
	c.w.sent(b)
	return c.Conn.Write(b)
}

func (c countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.w.received()
	}
	return n, err
}

// watchedShard is the package's database routed with node pools of one
// connection each whose traffic w counts, and which ask Citus to tell, as
// notices, every command it runs locally or sends to another node.
func watchedShard(t *testing.T) (*tenant.Shard, *wire) {
	t.Helper()
	w := &wire{}
	shard := tenant.NewShard("default", testdb.AppPool(t), tenant.SetLocal)
	opts := testdb.RouteOptions()
	opts.Configure = func(_ string, cfg *pgxpool.Config) {
		cfg.MaxConns = 1
		cfg.ConnConfig.RuntimeParams["citus.log_local_commands"] = "on"
		cfg.ConnConfig.RuntimeParams["citus.log_remote_commands"] = "on"
		cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			w.mu.Lock()
			w.notices = append(w.notices, n.Message)
			w.mu.Unlock()
		}
		dial := cfg.ConnConfig.DialFunc
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			w.mu.Lock()
			w.startup = true
			w.mu.Unlock()
			return countedConn{Conn: c, w: w}, nil
		}
	}
	if err := shard.Route(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shard.StopRouting)
	return shard, w
}

// Statements of the tests on users, a distributed table.
const (
	userCountSQL  = "select count(*) from users where workspace_id = $1"
	userInsertSQL = "insert into users (workspace_id, id, email, name) values ($1, $2, $3, 'u')"
)

// placementGroup is the Citus group that holds workspace's shard group.
func placementGroup(t *testing.T, ws uuid.UUID) int32 {
	t.Helper()
	var g int32
	if err := testdb.OwnerPool(t).QueryRow(context.Background(), `select groupid from pg_dist_placement
		where shardid = get_shard_id_for_distribution_column('users', $1::uuid)`, ws).Scan(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRoutedReadIsOneRoundTripOnItsNode is DESIGN's cost rule on a Citus
// cluster: a workspace's read goes to the node that holds the workspace, in
// one round trip (BEGIN, the SET LOCAL, the statement and COMMIT in one
// batch, as one node's is the setting and the statement), with nothing
// prepared again once the statements are cached, and the node runs it
// locally: one command executed locally on the workspace's shard, none sent
// to another node.
func TestRoutedReadIsOneRoundTripOnItsNode(t *testing.T) {
	if !testdb.OnCitus(t) {
		t.Skip("routing is for Citus clusters (make test-citus)")
	}
	ctx := context.Background()
	shard, w := watchedShard(t)
	ws := uuid.New()
	node := shard.NodeOf(ctx, ws)
	if node == nil || node.Group != placementGroup(t, ws) {
		t.Fatalf("workspace %s routed to %+v, want the node of group %d", ws, node, placementGroup(t, ws))
	}
	read := func() {
		t.Helper()
		var users int
		err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			b.Queue(userCountSQL, ws).QueryRow(func(r pgx.Row) error { return r.Scan(&users) })
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 8 { // past PostgreSQL's five custom plans, so a generic one would be in use
		read()
	}
	w.reset()
	read()
	roundTrips, execs, parses, notices := w.counts()
	var local, remote []string
	for _, n := range notices {
		switch {
		case strings.HasPrefix(n, "executing the command locally"):
			local = append(local, n)
		case strings.HasPrefix(n, "issuing"):
			remote = append(remote, n)
		}
	}
	if roundTrips != 1 || execs != 4 || parses != 0 {
		t.Errorf("a read: %d round trips, %d statements, %d prepared; want 1 round trip of 4 statements "+
			"(begin, set local, the read, commit), none prepared again", roundTrips, execs, parses)
	}
	if len(local) != 1 || len(remote) != 0 {
		t.Errorf("the node ran %d commands locally and sent %d to other nodes, want 1 and 0: %q",
			len(local), len(remote), notices)
	}
	t.Logf("one read on %s: %d round trip, %d statements, %d prepared; locally: %q",
		node.Addr, roundTrips, execs, parses, local)
	if len(local) == 1 && !strings.Contains(local[0], "users_") {
		t.Errorf("the local command is not on a shard of users: %s", local[0])
	}

	// The plan cache: generic plans where the Citus release keeps its
	// local plans, every statement planned afresh where it does not.
	var mode string
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select current_setting('plan_cache_mode')").QueryRow(func(r pgx.Row) error { return r.Scan(&mode) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]string{true: "auto", false: "force_custom_plan"}[shard.PlanCache()]; mode != want {
		t.Errorf("plan_cache_mode on the node is %q, want %q (plan cache %v)", mode, want, shard.PlanCache())
	}
	if !shard.PlanCache() {
		return
	}
	// With generic plans allowed, the statement that binds the workspace
	// keeps one: past PostgreSQL's five custom plans none is made again.
	var generic, custom int64
	err = shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select coalesce(sum(generic_plans), 0)::bigint, coalesce(sum(custom_plans), 0)::bigint
			from pg_prepared_statements where statement like '%pmapi_bind_workspace%'`).
			QueryRow(func(r pgx.Row) error { return r.Scan(&generic, &custom) })
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the workspace's binding: %d generic plans, %d custom", generic, custom)
	if generic == 0 || custom > 5 {
		t.Errorf("the workspace's binding was planned %d times generic, %d custom; want generic after 5 custom",
			generic, custom)
	}
}

// TestRoutedShardKeepsRowLevelSecurity: on the node that holds a workspace,
// its rows are seen only bound to it; bound to another workspace, the same
// statement (run locally on the same shard) sees none, and a write for
// another workspace is refused.
func TestRoutedShardKeepsRowLevelSecurity(t *testing.T) {
	if !testdb.OnCitus(t) {
		t.Skip("routing is for Citus clusters (make test-citus)")
	}
	ctx := context.Background()
	shard := testdb.ServerShard(t)
	a, b := uuid.New(), uuid.New()
	err := shard.Tx(ctx, a, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, userInsertSQL, a, uuid.New(), "a@example.com")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func(bound uuid.UUID) int {
		var n int
		if err := shard.Read(ctx, bound, func(bt *pgx.Batch) {
			bt.Queue(userCountSQL, a).QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(a); n != 1 {
		t.Errorf("bound to its workspace: %d users, want 1", n)
	}
	if n := count(b); n != 0 {
		t.Errorf("bound to another workspace: %d of its users, want none", n)
	}
	err = shard.Tx(ctx, b, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, userInsertSQL, a, uuid.New(), "x@example.com")
		return err
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("a write into another workspace: %v, want a row-level security refusal (42501)", err)
	}
}

// TestRoutedShardFollowsAMove: a workspace whose shard group is isolated and
// moved to another worker while its transactions go on is then served by the
// new node; none of its calls fails, none of its writes is lost, and an
// update of a row it has just locked always finds it. (Where Citus runs a
// write locally, a write that waited inside a statement for the split or move
// went on to the new shard with a snapshot from before it and found none of
// its rows: pmapi_bind_workspace makes a routed write wait at its start.)
func TestRoutedShardFollowsAMove(t *testing.T) {
	if !testdb.OnCitus(t) {
		t.Skip("routing is for Citus clusters (make test-citus)")
	}
	ctx := context.Background()
	shard := testdb.ServerShard(t)
	ws := uuid.New()
	before := shard.NodeOf(ctx, ws)
	if before == nil {
		t.Fatal("not routed")
	}
	var to string
	if err := testdb.OwnerPool(t).QueryRow(ctx, `select nodename || ':' || nodeport from pg_dist_node
		where groupid not in (0, $1) and noderole = 'primary' order by groupid limit 1`, before.Group).Scan(&to); err != nil {
		t.Fatal(err)
	}
	insert := func(id uuid.UUID) error {
		return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, userInsertSQL, ws, id, id.String()+"@example.com")
			return err
		})
	}
	var kept []uuid.UUID // rows the updaters change
	for range 40 {
		id := uuid.New()
		if err := insert(id); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, id)
	}
	placer := tenant.NewPlacer(map[string]*pgxpool.Pool{"default": testdb.OwnerPool(t)})
	placer.Timeout = 3 * time.Minute
	w := tenant.Workspace{ID: ws, Shard: "default"}

	load, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var written []uuid.UUID
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() { // the inserter
		for load.Err() == nil {
			id := uuid.New()
			if err := insert(id); err != nil {
				fail("insert: %v", err)
				continue
			}
			mu.Lock()
			written = append(written, id)
			mu.Unlock()
		}
	})
	for u := range 4 { // the updaters: lock a row, then change it
		wg.Go(func() {
			for i := 0; load.Err() == nil; i++ {
				id := kept[(u*10+i)%len(kept)]
				err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
					var got uuid.UUID
					if err := tx.QueryRow(ctx, "select id from users where workspace_id = $1 and id = $2 for update",
						ws, id).Scan(&got); err != nil {
						return fmt.Errorf("lock: %w", err)
					}
					tag, err := tx.Exec(ctx, "update users set name = $3 where workspace_id = $1 and id = $2", ws, id, strconv.Itoa(i))
					if err == nil && tag.RowsAffected() != 1 {
						return fmt.Errorf("update: %d rows of the row locked a statement before", tag.RowsAffected())
					}
					return err
				})
				if err != nil {
					fail("update %s: %v", id, err)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := placer.Isolate(ctx, w); err != nil {
		stop()
		t.Fatal(err)
	}
	pl, err := placer.Move(ctx, w, to)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... %d failures in all", len(failures))
			break
		}
		t.Error(f)
	}
	deadline := time.Now().Add(2*tenant.DefaultRouteRefresh + 5*time.Second)
	for {
		n := shard.NodeOf(ctx, ws)
		if n != nil && n.Addr == pl.Node {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workspace still routed to %+v after the move to %s", n, pl.Node)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var port, users int
	err = shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select inet_server_port()").QueryRow(func(r pgx.Row) error { return r.Scan(&port) })
		b.Queue(userCountSQL, ws).QueryRow(func(r pgx.Row) error { return r.Scan(&users) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, p, _ := net.SplitHostPort(pl.Node); p != strconv.Itoa(port) {
		t.Errorf("the read ran on port %d, want the new node %s", port, pl.Node)
	}
	if users != len(kept)+len(written) {
		t.Errorf("%d users after the move, %d acknowledged", users, len(kept)+len(written))
	}
	t.Logf("%d inserts during isolate and move from %s to %s", len(written), before.Addr, pl.Node)
}
