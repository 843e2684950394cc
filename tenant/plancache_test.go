package tenant_test

import (
	"testing"

	"github.com/pmapi/pmapi/tenant"
)

// TestLocalPlanCacheWorks: generic plans stay on the Citus releases that
// reuse their local plans, and are given up on those whose cache grows with
// every execution (citusdata/citus#8371) and on releases not known yet.
func TestLocalPlanCacheWorks(t *testing.T) {
	for version, want := range map[string]bool{
		"Citus 11.3.0 on x86_64-pc-linux-gnu":                  true,
		"Citus 12.1.10 on x86_64":                              true,
		"Citus 12.1.11 on x86_64":                              false,
		"Citus 13.0.5 on x86_64":                               true,
		"Citus 13.1.1 on x86_64":                               true,
		"Citus 13.2.0 on x86_64":                               true,
		"Citus 13.2.1 on x86_64":                               false,
		"Citus 13.2.2 on x86_64-pc-linux-gnu, compiled by gcc": false,
		"Citus 14.0.1 on x86_64":                               false,
		"Citus 14.1.0 on x86_64":                               false,
		"Citus 10.2.9 on x86_64":                               false, // before metadata on every node
		"PostgreSQL 15":                                        false,
	} {
		if got := tenant.LocalPlanCacheWorks(version); got != want {
			t.Errorf("%q: %v, want %v", version, got, want)
		}
	}
	for s, want := range map[string]bool{"on": true, "off": false} {
		p, err := tenant.ParsePlanCache(s)
		if err != nil || p.Allows("Citus 13.2.2 on x86_64") != want || p.Allows("Citus 13.2.0 on x86_64") != want {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := tenant.ParsePlanCache("sometimes"); err == nil {
		t.Error("a bad PMAPI_CITUS_PLAN_CACHE is accepted")
	}
}
