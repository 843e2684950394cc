package tenant

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
)

// Placement is where a workspace's rows live inside the Citus cluster of its
// directory shard: one shard group (users and every table colocated with it,
// moved together) on one node.
type Placement struct {
	// ShardID is the Citus shard of users that holds the workspace.
	ShardID int64
	// Node is the host:port of the node holding that shard group.
	Node string
	// Isolated is true when the shard group holds this workspace alone.
	Isolated bool
}

// Placer runs Citus's placement functions: the workspace isolate and move
// verbs. They need the tables' owner (Citus checks ownership), so it holds the
// owner role's pool of each directory shard, never the server role's.
type Placer struct {
	owners map[string]*pgxpool.Pool
	// Timeout bounds one isolate or move (DefaultPlacementTimeout when zero):
	// a copy that cannot catch up is cancelled, and Citus cleans it up.
	Timeout time.Duration
}

// DefaultPlacementTimeout is long enough to copy a large workspace and short
// enough that a stuck move does not hold its slot and locks for a day.
const DefaultPlacementTimeout = time.Hour

// NewPlacer takes the owner pools by directory shard name.
func NewPlacer(owners map[string]*pgxpool.Pool) *Placer { return &Placer{owners: owners} }

// Close closes the owner pools.
func (p *Placer) Close() {
	for _, pool := range p.owners {
		pool.Close()
	}
}

// errNeedsCitus is the answer of every placement verb on plain PostgreSQL.
func errNeedsCitus(shard string) error {
	return pmapi.Errorf(pmapi.CodeConflict, "workspace placement needs a Citus cluster: shard %q has no citus "+
		"extension (docs/operations.md, Citus)", shard).
		With("requires", "citus")
}

func (p *Placer) pool(ctx context.Context, shard string) (*pgxpool.Pool, error) {
	if p == nil || p.owners[shard] == nil {
		return nil, pmapi.Errorf(pmapi.CodeConflict, "workspace placement runs as the tables' owner: set "+
			"PMAPI_MIGRATE_DATABASE_URL (and PMAPI_MIGRATE_SHARDS for shard %q) for this process", shard).
			With("requires", "owner-url")
	}
	pool := p.owners[shard]
	var citus bool
	err := pool.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&citus)
	if err != nil {
		return nil, err
	}
	if !citus {
		return nil, errNeedsCitus(shard)
	}
	return pool, nil
}

// Where returns the workspace's placement.
func (p *Placer) Where(ctx context.Context, w Workspace) (Placement, error) {
	pool, err := p.pool(ctx, w.Shard)
	if err != nil {
		return Placement{}, err
	}
	return where(ctx, pool, w.ID)
}

func where(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, ws uuid.UUID) (Placement, error) {
	var pl Placement
	var host string
	var port int
	err := q.QueryRow(ctx, `select s.shardid, n.nodename, n.nodeport, s.shardminvalue = s.shardmaxvalue
		from pg_dist_shard s
		join pg_dist_placement p on p.shardid = s.shardid
		join pg_dist_node n on n.groupid = p.groupid and n.noderole = 'primary'
		where s.shardid = get_shard_id_for_distribution_column('users', $1::uuid)`, ws).
		Scan(&pl.ShardID, &host, &port, &pl.Isolated)
	if errors.Is(err, pgx.ErrNoRows) {
		return pl, fmt.Errorf("no placement for workspace %s's shard: is users distributed?", ws)
	}
	pl.Node = net.JoinHostPort(host, strconv.Itoa(port))
	return pl, err
}

// Isolate gives the workspace a shard group of its own (Citus splits the
// group it shares; writes to that hash range wait for the split's copy), on
// the node that held it. A workspace that is isolated already is left as it is.
func (p *Placer) Isolate(ctx context.Context, w Workspace) (Placement, error) {
	pool, err := p.pool(ctx, w.Shard)
	if err != nil {
		return Placement{}, err
	}
	var pl Placement
	err = p.transfer(ctx, pool, func(ctx context.Context, conn *pgxpool.Conn) error {
		if pl, err = where(ctx, conn, w.ID); err != nil || pl.Isolated {
			return err
		}
		// block_writes: Citus's non-blocking split can wait forever for its
		// logical replication to catch up while the range takes updates
		// (citusdata/citus#6790, seen here as "publisher did not send replica
		// identity column"). Writes to the range wait for the split's copy
		// instead; none fails and none is lost.
		_, err := conn.Exec(ctx, "select isolate_tenant_to_new_shard('users', $1::uuid, 'CASCADE', 'block_writes')", w.ID)
		if err != nil {
			return fmt.Errorf("isolate workspace %s: %w", w.ID, err)
		}
		announce(ctx, conn, w.ID)
		pl, err = where(ctx, conn, w.ID)
		return err
	})
	return pl, err
}

// Move moves the workspace's shard group to node (host:port, a node of the
// cluster): reads go on, writes to the group wait while Citus copies it and
// then go to the new node. Every other workspace of an unisolated group moves
// with it, so large workspaces are isolated first.
func (p *Placer) Move(ctx context.Context, w Workspace, node string) (Placement, error) {
	host, portText, err := net.SplitHostPort(node)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil || host == "" {
		return Placement{}, pmapi.Invalid("node", "node must be HOST:PORT of a node of the cluster")
	}
	pool, err := p.pool(ctx, w.Shard)
	if err != nil {
		return Placement{}, err
	}
	var known bool
	if err := pool.QueryRow(ctx, `select exists (select 1 from pg_dist_node
		where nodename = $1 and nodeport = $2 and noderole = 'primary' and isactive)`, host, port).Scan(&known); err != nil {
		return Placement{}, err
	}
	if !known {
		return Placement{}, pmapi.Invalid("node", "%s is not an active node of the cluster (see pg_dist_node)", node)
	}
	var pl Placement
	err = p.transfer(ctx, pool, func(ctx context.Context, conn *pgxpool.Conn) error {
		if pl, err = where(ctx, conn, w.ID); err != nil || pl.Node == net.JoinHostPort(host, strconv.Itoa(port)) {
			return err
		}
		from, fromPort, _ := net.SplitHostPort(pl.Node)
		fp, _ := strconv.Atoi(fromPort)
		// block_writes, as for the isolate: the non-blocking move's final
		// catch-up let a write acknowledged just before the switch stay in the
		// old placement only (found under load by TestMoveWorkspaceUnderLoad:
		// the row was in the source shard awaiting deferred drop, not in the
		// new one). Blocking, Citus holds the workspace's writes from before
		// its copy until the switch commits, so the copy has every write.
		_, err := conn.Exec(ctx, "select citus_move_shard_placement($1, $2, $3, $4, $5, 'block_writes')",
			pl.ShardID, from, fp, host, port)
		if err != nil {
			return fmt.Errorf("move workspace %s to %s: %w", w.ID, node, err)
		}
		announce(ctx, conn, w.ID)
		pl, err = where(ctx, conn, w.ID)
		return err
	})
	return pl, err
}

// announce tells every instance listening on the cluster that workspace's
// shard group changed place, so routed shards read their workspaces' nodes
// anew at once rather than at their next refresh. Best effort: the refresh
// and the retry of a statement that meets the move cover a lost one.
func announce(ctx context.Context, conn *pgxpool.Conn, workspace uuid.UUID) {
	_, _ = conn.Exec(ctx, "select pg_notify($1, $2)", InvalidationChannel, PlacementChanged(workspace).String())
}
