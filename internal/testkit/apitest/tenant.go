package apitest

import (
	"net/url"
	"testing"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/resource/registry"
)

// Tenant is a workspace with a console user and an app whose key carries the
// scopes asked for: what a resource test needs to act as an integration.
type Tenant struct {
	env         *Env
	WorkspaceID string
	ConsoleID   string
	UserID      string
	SID         string
	ClientID    string
	Key         string
}

// AllScopes is every scope, for tests that are not about scopes.
var AllScopes = func() []string {
	resources, err := registry.Resources(registry.Deps{Events: event.Discard{}, SecretBox: deploymentBox})
	if err != nil {
		panic(err)
	}
	var names []string
	for _, r := range resources {
		names = append(names, r.Scopes...)
	}
	return names
}()

// NewTenant creates a workspace, its user and session, an app declaring every
// scope, and a key with scopes (every scope when none are given), all through
// the real admin and console endpoints.
func (e *Env) NewTenant(t testing.TB, scopes ...string) *Tenant {
	t.Helper()
	must := func(r *Response, want int, what string) *Response {
		t.Helper()
		if r.Status != want {
			t.Fatalf("%s: %d %s", what, r.Status, r.Raw)
		}
		return r
	}
	ws := must(
		e.Do(
			t,
			Request{Method: "POST", Path: "/admin/v1/workspaces", Header: e.Admin(), Body: map[string]any{"name": t.Name()}},
		),
		201,
		"create workspace",
	)
	tn := &Tenant{env: e, WorkspaceID: ws.Str("workspaceId"), ConsoleID: ws.Str("consoleClientId")}
	user := must(
		e.Do(t, Request{Method: "POST", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/users", Header: e.Admin(),
			Body: map[string]any{"email": "user@" + tn.WorkspaceID[:8] + ".example.com", "name": "User"}}),
		201,
		"create user",
	)
	tn.UserID = user.Str("id")
	sess := must(
		e.Do(
			t,
			Request{
				Method: "POST",
				Path:   "/admin/v1/workspaces/" + tn.WorkspaceID + "/users/" + tn.UserID + "/sessions",
				Header: e.Admin(),
			},
		),
		201,
		"issue session",
	)
	tn.SID = sess.Str("sid")
	app := must(
		tn.Console(
			t,
			"POST",
			"/openapi/v1/apps",
			map[string]any{"workspaceId": tn.WorkspaceID, "name": "test app", "scopes": AllScopes},
		),
		201,
		"create app",
	)
	tn.ClientID = app.Str("clientId")
	if len(scopes) == 0 {
		scopes = AllScopes
	}
	tn.Key = tn.NewKey(t, scopes...)
	return tn
}

// NewKey issues another key of the tenant's app with scopes.
func (tn *Tenant) NewKey(t testing.TB, scopes ...string) string {
	t.Helper()
	if scopes == nil {
		scopes = []string{}
	}
	r := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/keys", map[string]any{"scopes": scopes})
	if r.Status != 201 {
		t.Fatalf("create key: %d %s", r.Status, r.Raw)
	}
	return r.Str("apiKey")
}

// WithKey returns the tenant acting with another key of its app.
func (tn *Tenant) WithKey(key string) *Tenant {
	c := *tn
	c.Key = key
	return &c
}

// Console sends a console (session) request.
func (tn *Tenant) Console(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	return tn.env.Do(t, Request{Method: method, Path: path, Body: body,
		Header: map[string]string{"X-Client-ID": tn.ConsoleID}, Cookies: map[string]string{"sid": tn.SID}})
}

// Do sends a resource request with the tenant's app and key.
func (tn *Tenant) Do(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	return tn.env.Do(t, Request{Method: method, Path: path, Body: body,
		Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key}})
}

// Created sends a POST that must answer 201 and returns its data.
func (tn *Tenant) Created(t testing.TB, path string, body any) map[string]any {
	t.Helper()
	r := tn.Do(t, "POST", path, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
	}
	return r.Data()
}

// Get sends a GET with query parameters.
func (tn *Tenant) Get(t testing.TB, path string, query map[string]string) *Response {
	t.Helper()
	q := url.Values{}
	for k, v := range query {
		q.Set(k, v)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return tn.Do(t, "GET", path, nil)
}

// Items returns data.items of a list answer.
func (r *Response) Items() []map[string]any {
	raw, _ := r.Data()["items"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		out = append(out, it.(map[string]any))
	}
	return out
}

// IDs returns the `id` of each listed item.
func (r *Response) IDs() []string {
	var out []string
	for _, it := range r.Items() {
		id, _ := it["id"].(string)
		out = append(out, id)
	}
	return out
}
