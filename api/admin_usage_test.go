package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/tenant/usage"
)

func init() {
	isoSkipped["GET /admin/v1/workspaces/{workspaceId}/usage"] = isoByDesign +
		" (TestWorkspaceUsageAcrossReplicas: no other workspace's app in a workspace's usage)"
}

// replica is one in-process server with a usage counter of its own.
type replica struct {
	env     *apitest.Env
	counter *usage.Counter
}

func newReplica(t *testing.T) replica {
	c := usage.NewCounter()
	return replica{apitest.New(t, func(cfg *apitest.Config) { cfg.Usage = c }), c}
}

func (r replica) flush(t *testing.T) {
	t.Helper()
	if err := r.counter.Flush(context.Background(), r.env.Directory); err != nil {
		t.Fatal(err)
	}
}

func keyHeaders(tn *apitest.Tenant) map[string]string {
	return map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key}
}

// send makes n requests of tn's app through r that answer status.
func (r replica) send(t *testing.T, tn *apitest.Tenant, n, status int) {
	t.Helper()
	for range n {
		req := apitest.Request{Method: "GET", Path: "/openapi/v1/me", Header: keyHeaders(tn)}
		if status == 400 {
			req = apitest.Request{Method: "POST", Path: "/openapi/v1/resource/project/create",
				Header: keyHeaders(tn), Body: map[string]any{}}
		}
		if got := r.env.Do(t, req); got.Status != status {
			t.Fatalf("%s %s: %d, want %d: %s", req.Method, req.Path, got.Status, status, got.Raw)
		}
	}
}

// usageOf reads a workspace's usage through the admin route, by client id.
func usageOf(t *testing.T, env *apitest.Env, ws string) map[string]map[string]any {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + ws + "/usage", Header: env.Admin()})
	if r.Status != 200 {
		t.Fatalf("usage of %s: %d %s", ws, r.Status, r.Raw)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	out := map[string]map[string]any{}
	for _, it := range r.Data()["items"].([]any) {
		item := it.(map[string]any)
		if item["date"] != today {
			t.Errorf("item of %v, want only today's", item["date"])
		}
		client, _ := item["clientId"].(string)
		out[client] = item
	}
	return out
}

// TestWorkspaceUsageAcrossReplicas: requests of two workspaces' apps go
// through two replicas, and one replica is replaced (a restart: a new
// counter, the old one flushed as pmapi serve flushes on its way out). The
// admin route answers each app's totals exactly as sent, nothing counted
// twice, and a workspace's usage names no other workspace's app.
func TestWorkspaceUsageAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b := newReplica(t), newReplica(t)
	one, two := a.env.NewTenant(t), a.env.NewTenant(t)

	a.send(t, one, 3, 200)
	a.send(t, one, 2, 400)
	b.send(t, one, 4, 200)
	b.send(t, two, 2, 200)
	a.flush(t)
	b.flush(t)
	b.flush(t)
	restarted := newReplica(t)
	restarted.send(t, one, 1, 200)
	restarted.send(t, two, 1, 400)
	restarted.flush(t)

	got := usageOf(t, a.env, one.WorkspaceID)
	app := got[one.ClientID]
	if app == nil {
		t.Fatalf("no item for the app %s: %v", one.ClientID, got)
	}
	want := map[string]float64{"requests2xx": 8, "requests4xx": 2, "requests5xx": 0,
		"events": 0, "deliveries": 0, "deliveriesFailed": 0}
	for field, n := range want {
		if app[field] != n {
			t.Errorf("%s = %v, want %v (%v)", field, app[field], n, app)
		}
	}
	for client := range got {
		if client == two.ClientID || client == two.ConsoleID {
			t.Errorf("workspace one's usage lists the other workspace's client %s", client)
		}
	}
	other := usageOf(t, b.env, two.WorkspaceID)[two.ClientID]
	if other["requests2xx"] != 2.0 || other["requests4xx"] != 1.0 {
		t.Errorf("workspace two's app: %v, want 2 successes and 1 failure", other)
	}
}

// TestWorkspaceUsageRefusals: the route is the operator's alone, an unknown
// workspace is 404, and dates that are not dates or not a span are 400.
func TestWorkspaceUsageRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	path := "/admin/v1/workspaces/" + tn.WorkspaceID + "/usage"

	r := env.Do(t, apitest.Request{Method: "GET", Path: path, Header: keyHeaders(tn)})
	if r.Status != 401 || r.Body["data"] != nil {
		t.Errorf("a workspace's own API key on the admin route: %d %s, want 401 and no data", r.Status, r.Raw)
	}
	r = env.Do(t, apitest.Request{Method: "GET",
		Path: "/admin/v1/workspaces/0196f3a0-0000-7000-8000-000000000000/usage", Header: env.Admin()})
	apitest.WantError(t, r, 404, "NOT_FOUND")

	for _, q := range []string{"?from=yesterday", "?to=2026-02-30", "?from=2026-03-02&to=2026-03-01",
		"?from=2024-01-01&to=2026-01-01"} {
		r := env.Do(t, apitest.Request{Method: "GET", Path: path + q, Header: env.Admin()})
		apitest.WantError(t, r, 400, "VALIDATION_FAILED")
	}
	r = env.Do(t, apitest.Request{Method: "GET", Path: path + "?from=2026-01-01&to=2026-01-31", Header: env.Admin()})
	if r.Status != 200 || len(r.Data()["items"].([]any)) != 0 {
		t.Errorf("a span without use: %d %s, want 200 and no items", r.Status, r.Raw)
	}
}
