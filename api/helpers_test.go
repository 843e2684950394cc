package api_test

import (
	"maps"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// newTenant is a workspace of the test's own with a key carrying scopes
// (every scope when none are given), on the package's shared app.
func newTenant(t *testing.T, scopes ...string) *apitest.Tenant {
	t.Helper()
	return apitest.Shared(t).NewTenant(t, scopes...)
}

// twoTenants are two fresh workspaces of the shared server, for a test that
// shows one never reaches the other's rows.
func twoTenants(t *testing.T) (a, b *apitest.Tenant) {
	t.Helper()
	env := apitest.Shared(t)
	return env.NewTenant(t), env.NewTenant(t)
}

// pagesWhileRowsArrive walks the list at path page by page from query (a
// limit, filters), calling arrive after each page: rows inserted between page
// requests must not shift the pages. It fails t unless each of want is seen
// exactly once, and answers the ids in page order.
func pagesWhileRowsArrive(t *testing.T, tn *apitest.Tenant, path string, query map[string]string, want []string, arrive func(page int)) []string {
	t.Helper()
	seen := map[string]int{}
	var order []string
	q := maps.Clone(query)
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatal("paging does not end")
		}
		r := tn.Get(t, path, q)
		for _, id := range r.IDs() {
			seen[id]++
			order = append(order, id)
		}
		arrive(page)
		next, ok := r.Data()["nextCursor"].(string)
		if !ok {
			break
		}
		q["cursor"] = next
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("%s seen %d times", id, seen[id])
		}
	}
	return order
}

// console is a signed-in user of a fresh workspace.
type console struct {
	env *apitest.Env
	workspace
}

func newConsole(t *testing.T, env *apitest.Env) console {
	t.Helper()
	return console{env: env, workspace: createWorkspace(t, env, t.Name())}
}

// do sends a console (session) request.
func (c console) do(t *testing.T, method, path string, body any) *apitest.Response {
	t.Helper()
	return c.env.Do(t, apitest.Request{Method: method, Path: path, Body: body,
		Header: map[string]string{"X-Client-ID": c.ConsoleClientID}, Cookies: map[string]string{"sid": c.SID}})
}

type app struct {
	ClientID, Secret string
}

func (c console) createApp(t *testing.T, scopes ...string) app {
	t.Helper()
	if scopes == nil {
		scopes = []string{}
	}
	r := c.do(t, "POST", "/openapi/v1/apps", map[string]any{"workspaceId": c.ID, "name": "app", "scopes": scopes})
	if r.Status != 201 {
		t.Fatalf("create app: %d %s", r.Status, r.Raw)
	}
	return app{ClientID: r.Str("clientId"), Secret: r.Str("secret")}
}

type key struct {
	ID, Value, ClientID string
}

func (c console) createKey(t *testing.T, a app, body map[string]any) key {
	t.Helper()
	r := c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys", body)
	if r.Status != 201 {
		t.Fatalf("create key: %d %s", r.Status, r.Raw)
	}
	return key{ID: r.Str("id"), Value: r.Str("apiKey"), ClientID: a.ClientID}
}

// me calls the key-authenticated credential endpoint.
func me(t *testing.T, env *apitest.Env, clientID, authorization string) *apitest.Response {
	t.Helper()
	h := map[string]string{}
	if clientID != "" {
		h["X-Client-ID"] = clientID
	}
	if authorization != "" {
		h["Authorization"] = authorization
	}
	return env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/me", Header: h})
}

func wantError(t *testing.T, r *apitest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.ErrorCode(), status, code, r.Raw)
	}
}
