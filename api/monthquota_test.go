package api_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/tenant/usage"
)

// A workspace's requestsPerMonth quota refuses its keys' requests once the
// month's count reaches it: 429 QUOTA_EXCEEDED with the quota's details and
// Retry-After at the next UTC month. The count is read once per refresh and
// kept in memory in between, so the limit holds without a database read per
// request; another workspace is not held to it, and raising the quota lets
// requests through again at once on the replica that raised it.
func TestRequestsPerMonthQuotaRefusesUntilNextMonth(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *apitest.Config) {
		c.Usage = usage.NewCounter()
		c.QuotaRefresh = time.Hour // the test's requests are counted by the guard alone
	})
	tn, other := env.NewTenant(t), env.NewTenant(t)
	_, before := quotaOf(quotas(t, env, tn.WorkspaceID, "GET", nil), "requestsPerMonth")
	if before < 1 {
		t.Fatalf("the tenant's setup requests are not counted: used %d", before)
	}
	const allowed = 3
	limit := before + allowed
	if r := quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"requestsPerMonth": limit}); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Raw)
	}
	for i := range allowed {
		if r := tn.Get(t, "/openapi/v1/resource/project/list", nil); r.Status != 200 {
			t.Fatalf("request %d of %d allowed: %d %s", i+1, allowed, r.Status, r.Raw)
		}
	}
	r := tn.Get(t, "/openapi/v1/resource/project/list", nil)
	apitest.WantError(t, r, 429, "QUOTA_EXCEEDED")
	d := r.ErrorDetails()
	if d["quota"] != "requestsPerMonth" || d["limit"] != float64(limit) || d["used"] != float64(limit) {
		t.Errorf("details: %v, want requestsPerMonth at %d of %d", d, limit, limit)
	}
	now := time.Now().UTC()
	nextMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > nextMonth.Sub(now)+time.Minute {
		t.Errorf("Retry-After %q: want the seconds to %s", r.Header.Get("Retry-After"), nextMonth)
	}
	if r := other.Get(t, "/openapi/v1/resource/project/list", nil); r.Status != 200 {
		t.Errorf("another workspace is held to this one's quota: %d %s", r.Status, r.Raw)
	}
	if _, used := quotaOf(quotas(t, env, tn.WorkspaceID, "GET", nil), "requestsPerMonth"); used < limit {
		t.Errorf("used after the refusal: %d, want at least %d", used, limit)
	}
	if r := quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"requestsPerMonth": nil}); r.Status != 200 {
		t.Fatalf("put unlimited: %d %s", r.Status, r.Raw)
	}
	if r := tn.Get(t, "/openapi/v1/resource/project/list", nil); r.Status != 200 {
		t.Errorf("after the quota is lifted: %d %s", r.Status, r.Raw)
	}
}
