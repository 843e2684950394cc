package api_test

import (
	"sync"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func quotas(t *testing.T, env *apitest.Env, ws, method string, body any) *apitest.Response {
	t.Helper()
	return env.Do(t, apitest.Request{Method: method, Path: "/admin/v1/workspaces/" + ws + "/quotas",
		Header: env.Admin(), Body: body})
}

// quotaOf reads one quota of a quotas answer as limit and used (-1: null).
func quotaOf(r *apitest.Response, kind string) (limit, used int) {
	q, _ := r.Data()[kind].(map[string]any)
	limit, used = -1, -1
	if v, ok := q["limit"].(float64); ok {
		limit = int(v)
	}
	if v, ok := q["used"].(float64); ok {
		used = int(v)
	}
	return limit, used
}

func TestQuotasAreSetAndReadWithTheirUse(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	r := quotas(t, env, tn.WorkspaceID, "GET", nil)
	if r.Status != 200 {
		t.Fatalf("get: %d %s", r.Status, r.Raw)
	}
	if l, u := quotaOf(r, "apps"); l != -1 || u != 1 {
		t.Errorf("apps before any quota: limit %d used %d, want unlimited and 1", l, u)
	}
	r = quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"apps": 3, "keysPerApp": 5, "webhooks": nil,
		"requestsPerMonth": 100000})
	if r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Raw)
	}
	for kind, want := range map[string][2]int{"apps": {3, 1}, "keysPerApp": {5, 1}, "webhooks": {-1, 0},
		"requestsPerMonth": {100000, -1}} {
		if l, u := quotaOf(r, kind); l != want[0] || u != want[1] {
			t.Errorf("%s: limit %d used %d, want %v", kind, l, u, want)
		}
	}
	if l, _ := quotaOf(quotas(t, env, tn.WorkspaceID, "GET", nil), "keysPerApp"); l != 5 {
		t.Errorf("keysPerApp read back: %d", l)
	}
	apitest.WantError(t, quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"apps": -1}), 400, "VALIDATION_FAILED")
	apitest.WantError(t, quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"apps": "many"}), 400,
		"VALIDATION_FAILED")
	apitest.WantError(t, quotas(t, env, "00000000-0000-0000-0000-000000000000", "GET", nil), 404, "NOT_FOUND")
}

func TestGoingOverACountQuotaIs429WithoutRetryAfter(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	set := map[string]any{"apps": 1, "keysPerApp": 1, "webhooks": 0}
	if r := quotas(t, env, tn.WorkspaceID, "PUT", set); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Raw)
	}
	for _, c := range []struct {
		name, quota, path string
		body              map[string]any
		used              float64
	}{
		{"apps", "apps", "/openapi/v1/apps",
			map[string]any{"workspaceId": tn.WorkspaceID, "name": "one too many", "scopes": []string{}}, 1},
		{"keys", "keysPerApp", "/openapi/v1/apps/" + tn.ClientID + "/keys", map[string]any{"scopes": []string{}}, 1},
		{"webhooks", "webhooks", "/openapi/v1/apps/" + tn.ClientID + "/webhooks",
			map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"*"}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := tn.Console(t, "POST", c.path, c.body)
			apitest.WantError(t, r, 429, "QUOTA_EXCEEDED")
			d := r.ErrorDetails()
			if d["quota"] != c.quota || d["used"] != c.used || d["limit"] != c.used {
				t.Errorf("details %v", d)
			}
			if r.Header.Get("Retry-After") != "" {
				t.Errorf("Retry-After %q on a count quota", r.Header.Get("Retry-After"))
			}
		})
	}
	// Room made (a key revoked) is room to create again.
	keys := tn.Console(t, "GET", "/openapi/v1/apps/"+tn.ClientID+"/keys", nil).IDs()
	if r := tn.Console(t, "DELETE", "/openapi/v1/apps/"+tn.ClientID+"/keys/"+keys[0], nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	r := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/keys", map[string]any{"scopes": []string{}})
	if r.Status != 201 {
		t.Errorf("a key after a revocation made room: %d %s", r.Status, r.Raw)
	}
	// Another workspace has no quotas.
	other := env.NewTenant(t)
	if r := other.Console(t, "POST", "/openapi/v1/apps",
		map[string]any{"workspaceId": other.WorkspaceID, "name": "free", "scopes": []string{}}); r.Status != 201 {
		t.Errorf("another workspace's app: %d %s", r.Status, r.Raw)
	}
}

// Concurrent creations never overshoot a quota: the quota row's lock serves
// them one after another, so exactly the limit's worth succeed.
func TestConcurrentCreationsEndExactlyAtTheLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	const limit, tries = 5, 16
	if r := quotas(t, env, tn.WorkspaceID, "PUT", map[string]any{"apps": limit, "keysPerApp": limit}); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Raw)
	}
	for _, c := range []struct {
		kind, path string
		body       map[string]any
	}{
		{"apps", "/openapi/v1/apps", map[string]any{"workspaceId": tn.WorkspaceID, "name": "racing", "scopes": []string{}}},
		{"keysPerApp", "/openapi/v1/apps/" + tn.ClientID + "/keys", map[string]any{"scopes": []string{}}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			var wg sync.WaitGroup
			statuses := make([]int, tries)
			for i := range tries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = tn.Console(t, "POST", c.path, c.body).Status
				}()
			}
			wg.Wait()
			created, refused := 0, 0
			for _, s := range statuses {
				switch s {
				case 201:
					created++
				case 429:
					refused++
				default:
					t.Errorf("status %d", s)
				}
			}
			if created != limit-1 || refused != tries-created {
				t.Errorf("%d created and %d refused; want %d created (one existed)", created, refused, limit-1)
			}
			if _, used := quotaOf(quotas(t, env, tn.WorkspaceID, "GET", nil), c.kind); used != limit {
				t.Errorf("%s used %d, want exactly %d", c.kind, used, limit)
			}
		})
	}
}
