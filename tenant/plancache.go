package tenant

import (
	"fmt"
	"regexp"
	"strconv"
)

// PlanCache says whether statements routed to a Citus node may use
// PostgreSQL's generic plans (PMAPI_CITUS_PLAN_CACHE).
//
// A generic plan is what lets Citus run a prepared statement on a local
// shard from its local plan cache. Citus 12.1.11, 12.1.12, 13.2.1, 13.2.2,
// 14.0.0 and 14.0.1 break that cache (citusdata/citus#8371 made its lookup
// miss every time): each execution plans the shard query again and adds the
// plan to the prepared statement, about 47 KB an execution measured here, so
// a pooled connection grows until the node runs out of memory
// (citusdata/citus#8824 fixes it). On those releases, and on releases this
// code does not know, routed pools plan every statement with its parameters
// instead (plan_cache_mode = force_custom_plan): no cache and no growth.
type PlanCache int

const (
	// PlanCacheAuto keeps generic plans on the Citus releases known to cache
	// local plans correctly, and forces custom plans on every other.
	PlanCacheAuto PlanCache = iota
	// PlanCacheOn keeps generic plans whatever the release: for a Citus with
	// the fix.
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
// release citus_version() describes.
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
// 13.0.5, 13.1.1 and 13.2.0, before the branches took citusdata/citus#8371.
// Later releases are not presumed fixed.
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
