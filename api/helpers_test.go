package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// console is a signed-in user of a fresh workspace.
type console struct {
	env *apitest.Env
	workspace
}

func newConsole(t *testing.T, env *apitest.Env) console {
	t.Helper()
	return console{env: env, workspace: createWorkspace(t, env, t.Name())}
}

// consoleWithApp is a console of a fresh workspace on the package's shared
// app, and an app of it with scopes.
func consoleWithApp(t *testing.T, scopes ...string) (*apitest.Env, console, app) {
	t.Helper()
	env := apitest.Shared(t)
	c := newConsole(t, env)
	return env, c, c.createApp(t, scopes...)
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
