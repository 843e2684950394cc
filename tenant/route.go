package tenant

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmapi/pmapi/internal/tick"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/migrations"
)

// RouteOptions shape how a shard on a Citus cluster reaches its nodes.
type RouteOptions struct {
	// NodeAddrs say where this process reaches a node (host:port), keyed by
	// host:port as pg_dist_node names it; a node not listed is reached there.
	// Either way with the shard's URL otherwise: its role, password, database
	// and parameters.
	NodeAddrs map[string]string
	// PlanCache decides whether routed statements may use PostgreSQL's
	// generic plans, which Citus keeps as local plans per shard (PlanCacheAuto
	// when zero).
	PlanCache PlanCache
	// Refresh is how often the placements are checked for a move or split
	// made elsewhere (DefaultRouteRefresh when zero).
	Refresh time.Duration
	// Configure, when set, adjusts a node's pool configuration before it
	// connects (tests watch a node's traffic with it). A node's pool is
	// otherwise the shard's own, copied: its size, role, database, TLS and
	// connection hooks, on the node's address.
	Configure func(addr string, cfg *pgxpool.Config)
}

// DefaultRouteRefresh bounds how long a workspace moved by something other
// than pmapi's own verbs (Citus's rebalancer, a move in psql) keeps being
// routed to its old node, where Citus still runs its statements correctly,
// at the cost of a hop.
const DefaultRouteRefresh = 2 * time.Second

// maxRoutes caps the workspaces whose node a shard remembers; past it the
// map starts again empty, and each workspace's next call reads its node anew.
const maxRoutes = 200_000

// Node is one Citus node that a routed shard runs workspaces' transactions on.
type Node struct {
	// Addr is host:port as pg_dist_node names it.
	Addr string
	// Group is the node's Citus group (0: the coordinator).
	Group int32
	// Pool is the server role's pool on the node.
	Pool *pgxpool.Pool
	// sent counts the transactions and reads sent to the node.
	sent atomic.Int64
}

// Sent is how many workspace transactions and reads the shard has sent to
// the node.
func (n *Node) Sent() int64 { return n.sent.Load() }

// router keeps a pool per node of a Citus cluster and the node of each
// workspace asked about.
type router struct {
	entry *pgxpool.Pool
	opts  RouteOptions
	// planCache is whether node pools keep PostgreSQL's plan cache choice
	// (resolved from opts.PlanCache and a probe of a node's local plan
	// cache, or the cluster's Citus release when the probe cannot tell).
	planCache bool
	version   string

	mu     sync.RWMutex
	nodes  map[int32]*Node // by group
	routes map[uuid.UUID]*Node
	// cleared counts the times routes started again empty: a route read
	// from the metadata before a clear is not kept after it.
	cleared uint64
	stamp   string
	// unusable are groups whose node could not be opened or lacks River's
	// schema; their workspaces go through the entry pool until a refresh
	// finds them ready.
	unusable map[int32]string

	stop context.CancelFunc
	done chan struct{}
}

// Route makes s run each workspace's transactions on the Citus node that holds
// the workspace's shard group, where Citus executes them locally, instead of
// sending them through the node behind s.Pool (the coordinator). s.Pool keeps
// what is not a workspace's: the directory, River's maintenance on the
// coordinator, DDL.
//
// A workspace whose node is not known yet is looked up once (a metadata read
// on s.Pool) and remembered; a statement that meets a move forgets it, as does
// an invalidation from the isolate and move verbs and a change of the cluster's
// placements seen every opts.Refresh. Until then a stale route is only slower:
// SET LOCAL carries the workspace to the node Citus sends the statement to.
// So Route needs SetLocal mode. It does nothing on plain PostgreSQL.
func (s *Shard) Route(ctx context.Context, opts RouteOptions) error {
	var citus bool
	err := s.Pool.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&citus)
	if err != nil {
		return fmt.Errorf("shard %s: %w", s.Name, err)
	}
	if !citus {
		return nil
	}
	if s.mode != SetLocal {
		return fmt.Errorf("shard %s is a Citus cluster: its workspaces need PMAPI_TENANT_SETTING=set_local "+
			"(set_config never reaches the node that holds a workspace's rows)", s.Name)
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRouteRefresh
	}
	r := &router{entry: s.Pool, opts: opts,
		nodes: map[int32]*Node{}, routes: map[uuid.UUID]*Node{}, unusable: map[int32]string{}}
	if err := s.Pool.QueryRow(ctx, "select citus_version()").Scan(&r.version); err != nil {
		return err
	}
	r.planCache = opts.PlanCache.Allows(r.version)
	if opts.PlanCache == PlanCacheAuto {
		if works, err := r.probePlanCache(ctx); err == nil {
			r.planCache = works
		}
	}
	if err := r.refresh(ctx); err != nil {
		r.close()
		return fmt.Errorf("shard %s: %w", s.Name, err)
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stop, r.done = stop, make(chan struct{})
	go r.watch(bg)
	s.router = r
	return nil
}

// StopRouting closes the node pools and sends every workspace's transactions
// through s.Pool again; s.Pool stays open.
func (s *Shard) StopRouting() {
	if r := s.router; r != nil {
		s.router = nil
		r.close()
	}
}

// Nodes returns the nodes a routed shard runs transactions on, by group; nil
// when the shard is not routed.
func (s *Shard) Nodes() []*Node {
	if s.router == nil {
		return nil
	}
	s.router.mu.RLock()
	defer s.router.mu.RUnlock()
	out := make([]*Node, 0, len(s.router.nodes))
	for _, n := range s.router.nodes {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *Node) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// usesPool reports whether pool is one of the routed shard's node pools.
func (s *Shard) usesPool(pool *pgxpool.Pool) bool {
	for _, n := range s.Nodes() {
		if n.Pool == pool {
			return true
		}
	}
	return false
}

// PlanCache reports whether the routed shard lets statements keep generic
// plans (false on plain PostgreSQL, which always does).
func (s *Shard) PlanCache() bool { return s.router != nil && s.router.planCache }

// NodeOf returns the node workspace's transactions run on: nil when they go
// through s.Pool (plain PostgreSQL, or a node this process cannot use).
func (s *Shard) NodeOf(ctx context.Context, workspace uuid.UUID) *Node {
	if s.router == nil {
		return nil
	}
	return s.router.node(ctx, workspace)
}

// pool is the pool workspace's transactions run on.
func (s *Shard) pool(ctx context.Context, workspace uuid.UUID) *pgxpool.Pool {
	if n := s.NodeOf(ctx, workspace); n != nil {
		n.sent.Add(1)
		return n.Pool
	}
	return s.Pool
}

// forget drops workspace's route after a statement met a move: the next run
// reads its node anew.
func (s *Shard) forget(workspace uuid.UUID) {
	if s.router == nil {
		return
	}
	s.router.mu.Lock()
	delete(s.router.routes, workspace)
	s.router.mu.Unlock()
}

// ForgetRoutes drops every workspace's route (a move takes every workspace of
// a shard group with it); the node pools stay.
func (s *Shard) ForgetRoutes() {
	if s.router == nil {
		return
	}
	s.router.mu.Lock()
	s.router.routes = map[uuid.UUID]*Node{}
	s.router.cleared++
	s.router.mu.Unlock()
}

func (r *router) node(ctx context.Context, workspace uuid.UUID) *Node {
	r.mu.RLock()
	n, ok := r.routes[workspace]
	cleared := r.cleared
	r.mu.RUnlock()
	if ok {
		return n
	}
	var group int32
	err := r.entry.QueryRow(ctx, `select p.groupid from pg_dist_placement p
		where p.shardid = get_shard_id_for_distribution_column('users', $1::uuid)`, workspace).Scan(&group)
	if err != nil {
		// Not remembered: Citus routes the statements from the entry node,
		// and the next call tries again.
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n = r.nodes[group]
	if r.cleared != cleared {
		// The placements changed while this was read: answer, but let the
		// next call read them again.
		return n
	}
	if len(r.routes) >= maxRoutes {
		r.routes = map[uuid.UUID]*Node{}
	}
	r.routes[workspace] = n
	return n
}

// watch refreshes the routes every opts.Refresh until ctx ends.
func (r *router) watch(ctx context.Context) {
	defer close(r.done)
	tick.Every(ctx, r.opts.Refresh, func() { _ = r.refresh(ctx) })
}

// placementStamp changes whenever a shard of users (and with it its
// colocated group) is split, moved or dropped, or a node is added, removed
// or moved.
const placementStamp = `select coalesce((select md5(string_agg(p.shardid || ':' || p.groupid, ',' order by p.shardid))
		from pg_dist_placement p join pg_dist_shard s on s.shardid = p.shardid
		where s.logicalrelid = 'users'::regclass), '') || ':' ||
	coalesce((select md5(string_agg(nodeid || ':' || groupid || ':' || nodename || ':' || nodeport || ':' || isactive, ','
		order by nodeid)) from pg_dist_node where noderole = 'primary'), '')`

// refresh reads the placement stamp and, when it changed (or a node was
// unusable), the nodes, opening pools for new ones; when the placements or
// the usable nodes changed, every workspace's node is read anew on its next
// call.
func (r *router) refresh(ctx context.Context) error {
	var stamp string
	if err := r.entry.QueryRow(ctx, placementStamp).Scan(&stamp); err != nil {
		return err
	}
	r.mu.RLock()
	same := stamp == r.stamp && len(r.unusable) == 0
	r.mu.RUnlock()
	if same {
		return nil
	}
	rows, err := r.entry.Query(ctx, `select groupid, nodename, nodeport from pg_dist_node
		where noderole = 'primary' and isactive order by groupid`)
	if err != nil {
		return err
	}
	type found struct {
		group int32
		addr  string
	}
	var all []found
	for rows.Next() {
		var f found
		var host string
		var port int32
		if err := rows.Scan(&f.group, &host, &port); err != nil {
			rows.Close()
			return err
		}
		f.addr = net.JoinHostPort(host, strconv.Itoa(int(port)))
		all = append(all, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	opened := map[int32]*Node{}
	unusable := map[int32]string{}
	var stale []*pgxpool.Pool
	r.mu.RLock()
	for _, f := range all {
		if n := r.nodes[f.group]; n != nil && n.Addr == f.addr {
			opened[f.group] = n
			continue
		}
		r.mu.RUnlock()
		n, err := r.open(ctx, f.group, f.addr)
		r.mu.RLock()
		if err != nil {
			unusable[f.group] = err.Error()
			continue
		}
		opened[f.group] = n
	}
	for g, n := range r.nodes {
		if opened[g] != n {
			stale = append(stale, n.Pool)
		}
	}
	r.mu.RUnlock()
	r.mu.Lock()
	changed := stamp != r.stamp || len(opened) != len(r.nodes)
	for g, n := range opened {
		changed = changed || r.nodes[g] != n
	}
	r.nodes, r.unusable, r.stamp = opened, unusable, stamp
	if changed {
		r.routes = map[uuid.UUID]*Node{}
		r.cleared++
	}
	r.mu.Unlock()
	for _, p := range stale {
		// Transactions still running on it finish first: Close waits for
		// acquired connections.
		go p.Close()
	}
	return nil
}

// open connects to a node and checks that it can take a workspace's
// transactions: River's tables are there (`pmapi migrate up` makes them on
// every node), so a job commits with the change that queued it.
func (r *router) open(ctx context.Context, group int32, addr string) (*Node, error) {
	cfg, err := r.nodeConfig(group, addr)
	if err != nil {
		return nil, err
	}
	if r.opts.Configure != nil {
		r.opts.Configure(addr, cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", addr, err)
	}
	if err := migrations.CheckRiver(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("node %s: %w", addr, err)
	}
	return &Node{Addr: addr, Group: group, Pool: pool}, nil
}

// probePlanCache runs ProbeLocalPlanCache on a node that holds shards of
// users, reached as its pool would reach it. Every node is taken to run the
// same Citus build.
func (r *router) probePlanCache(ctx context.Context) (bool, error) {
	var group int32
	var host string
	var port int32
	err := r.entry.QueryRow(ctx, `select n.groupid, n.nodename, n.nodeport from pg_dist_node n
		where n.noderole = 'primary' and n.isactive and exists (select 1 from pg_dist_placement p
			join pg_dist_shard s on s.shardid = p.shardid
			where s.logicalrelid = 'users'::regclass and p.groupid = n.groupid)
		order by n.groupid limit 1`).Scan(&group, &host, &port)
	if err != nil {
		return false, err
	}
	cfg, err := r.nodeConfig(group, net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		return false, err
	}
	return ProbeLocalPlanCache(ctx, cfg.ConnConfig)
}

// forcedCustomPlans is the setting node pools get when generic plans are off:
// every statement is planned with its parameters, which Citus plans and runs
// locally without its local plan cache.
const forcedCustomPlans = "force_custom_plan"

// nodeConfig is the shard's pool configuration on the node's host and port,
// or its NodeAddrs entry (the coordinator, group 0, keeps the shard's host as
// this process reaches it unless listed); with custom plans forced unless the
// plan cache is on.
func (r *router) nodeConfig(group int32, addr string) (*pgxpool.Config, error) {
	cfg := r.entry.Config().Copy()
	if a, ok := r.opts.NodeAddrs[addr]; ok || group != 0 {
		if ok {
			addr = a
		}
		host, portText, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", addr, err)
		}
		onHost(cfg.ConnConfig.Config.Host, host, uint16(port), &cfg.ConnConfig.Config)
	}
	if !r.planCache {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = forcedCustomPlans
	}
	return cfg, nil
}

// onHost points a connection's configuration, and its fallbacks (sslmode
// prefer and allow try twice), at host and port; a TLS configuration that
// checked the old host's name checks the new one's.
func onHost(old, host string, port uint16, c *pgconn.Config) {
	c.Host, c.Port = host, port
	if c.TLSConfig != nil && c.TLSConfig.ServerName == old {
		c.TLSConfig = c.TLSConfig.Clone()
		c.TLSConfig.ServerName = host
	}
	for i, fb := range c.Fallbacks {
		f := *fb
		f.Host, f.Port = host, port
		if f.TLSConfig != nil && f.TLSConfig.ServerName == old {
			f.TLSConfig = f.TLSConfig.Clone()
			f.TLSConfig.ServerName = host
		}
		c.Fallbacks[i] = &f
	}
}

// close stops the watcher and closes the node pools (not the entry pool).
func (r *router) close() {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.nodes {
		n.Pool.Close()
	}
	r.nodes = map[int32]*Node{}
}
