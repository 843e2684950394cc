package tenant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PlanCache says whether statements routed to a Citus node may use
// PostgreSQL's generic plans (PMAPI_CITUS_PLAN_CACHE).
//
// A generic plan is what lets Citus run a prepared statement on a local
// shard from its local plan cache. Citus 12.1.11, 12.1.12, 13.2.1, 13.2.2,
// 14.0.0 and 14.0.1 break that cache (a guard added to its lookup makes it
// miss for every prepared fast-path statement): each execution plans the
// shard query again and adds the plan to the prepared statement, about 47 KB
// an execution measured here, so a pooled connection grows until the node
// runs out of memory. Upstream's fix ("Fix local plan cache growth for
// prepared statements") restores one plan per shard. Where the cache is
// broken, routed pools plan every statement with its parameters instead
// (plan_cache_mode = force_custom_plan): no cache and no growth.
type PlanCache int

const (
	// PlanCacheAuto keeps generic plans where a node's local plan cache
	// works: ProbeLocalPlanCache asks a node that holds shards, and only when
	// it cannot tell does the release decide (LocalPlanCacheWorks).
	PlanCacheAuto PlanCache = iota
	// PlanCacheOn keeps generic plans whatever the probe or the release say.
	PlanCacheOn
	// PlanCacheOff forces custom plans on routed pools.
	PlanCacheOff
)

// ParsePlanCache reads PMAPI_CITUS_PLAN_CACHE.
func ParsePlanCache(s string) (PlanCache, error) {
	switch s {
	case "", "auto":
		return PlanCacheAuto, nil
	case "on":
		return PlanCacheOn, nil
	case "off":
		return PlanCacheOff, nil
	}
	return 0, fmt.Errorf("PMAPI_CITUS_PLAN_CACHE must be auto, on or off, not %q", s)
}

// String is the mode's PMAPI_CITUS_PLAN_CACHE value.
func (p PlanCache) String() string {
	switch p {
	case PlanCacheOn:
		return "on"
	case PlanCacheOff:
		return "off"
	}
	return "auto"
}

var citusRelease = regexp.MustCompile(`^Citus ([0-9]+)\.([0-9]+)\.([0-9]+)`)

// Allows reports whether routed statements keep generic plans on the Citus
// release citus_version() describes, when no probe could tell.
func (p PlanCache) Allows(version string) bool {
	switch p {
	case PlanCacheOn:
		return true
	case PlanCacheOff:
		return false
	}
	return LocalPlanCacheWorks(version)
}

// LocalPlanCacheWorks reports whether a Citus release (citus_version()'s
// text) is one known to reuse its local plans: the releases up to 12.1.10,
// 13.0.5, 13.1.1 and 13.2.0, before the branches took the broken guard.
// Later releases are not presumed fixed, and a patched build reports the
// release it was built from: ProbeLocalPlanCache is what recognises it.
func LocalPlanCacheWorks(version string) bool {
	m := citusRelease.FindStringSubmatch(version)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	switch {
	case major < 12:
		return major >= 11 // metadata on every node (Citus 11) is what routing needs
	case major == 12:
		return minor == 0 || (minor == 1 && patch <= 10)
	case major == 13:
		return (minor == 0 && patch <= 5) || (minor == 1 && patch <= 1) || (minor == 2 && patch == 0)
	}
	return false
}

// cachedLocalPlan starts the message Citus logs at DEBUG5 each time it plans
// a shard query to keep in a prepared statement's local plan cache.
const cachedLocalPlan = "Local shard query that is going to be cached"

// probeRuns is how often ProbeLocalPlanCache runs its statement: one
// generic plan, then executions that a working cache answers from it.
const probeRuns = 5

// ErrProbeInconclusive means ProbeLocalPlanCache could not tell: the node
// holds no shard of a table it may read, or Citus cached no local plan at all
// (local execution turned off).
var ErrProbeInconclusive = errors.New("tenant: the Citus node's local plan cache could not be probed")

// ProbeLocalPlanCache asks the Citus node cfg connects to whether its local
// plan cache works, rather than trusting its release: a build with the fix
// reports the release it was built from. On its own connection it prepares a
// fast-path read of a local shard (the first hash-distributed table with a
// uuid distribution column that the role may read, keyed by a value that
// hashes to a shard on the node; no row needs to exist, and row level
// security still applies), runs it probeRuns times with a generic plan, and
// counts the times Citus says it plans the shard query for its cache
// (client_min_messages = debug5, which any role may set). A working cache
// plans it once; a broken one on every execution after the first.
func ProbeLocalPlanCache(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	cfg = cfg.Copy()
	cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	var planned atomic.Int32
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if strings.HasPrefix(n.Message, cachedLocalPlan) {
			planned.Add(1)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var table, column string
	var key uuid.UUID
	err = conn.QueryRow(ctx, `select t.logicalrelid::regclass::text, quote_ident(a.attname), k.u
		from pg_dist_partition t
		join pg_attribute a on a.attrelid = t.logicalrelid
			and a.attname = column_to_column_name(t.logicalrelid, t.partkey)
		cross join lateral (select u from (select gen_random_uuid() u from generate_series(1, 256)) g
			where exists (select 1 from pg_dist_placement p
				where p.shardid = get_shard_id_for_distribution_column(t.logicalrelid, g.u)
				and p.groupid = (select groupid from pg_dist_local_group))
			limit 1) k
		where t.partmethod = 'h' and a.atttypid = 'uuid'::regtype
			and has_table_privilege(t.logicalrelid, 'select')
		order by t.logicalrelid::regclass::text
		limit 1`).Scan(&table, &column, &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, ErrProbeInconclusive
	}
	if err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "set plan_cache_mode = force_generic_plan"); err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "set client_min_messages = debug5"); err != nil {
		return false, err
	}
	read := "select 1 from " + table + " where " + column + " = $1"
	for range probeRuns {
		if _, err := conn.Exec(ctx, read, key); err != nil {
			return false, err
		}
	}
	if n := planned.Load(); n > 0 {
		return n == 1, nil
	}
	return false, ErrProbeInconclusive
}
