package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestRenewWithoutADateNeverShortens: an empty renew extends a key to 90 days
// from now, but leaves a later expiry, and a key that never expires, alone.
func TestRenewWithoutADateNeverShortens(t *testing.T) {
	t.Parallel()
	c := newConsole(t, apitest.Shared(t))
	a := c.createApp(t, "tasks:read")
	far := time.Now().Add(365 * 24 * time.Hour).UTC().Truncate(time.Second)
	long := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}, "expiresAt": far.Format(time.RFC3339)})
	never := c.createKey(t, a, map[string]any{"scopes": []string{"tasks:read"}})
	for _, body := range []any{nil, map[string]any{}} {
		r := c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+long.ID+"/renew", body)
		if got, _ := time.Parse(time.RFC3339, r.Str("expiresAt")); r.Status != 201 || !got.Equal(far) {
			t.Errorf("renew %v of a key expiring in a year: %d %s, want %s kept", body, r.Status, r.Raw, far)
		}
		r = c.do(t, "POST", "/openapi/v1/apps/"+a.ClientID+"/keys/"+never.ID+"/renew", body)
		if r.Status != 201 || r.Data()["expiresAt"] != nil {
			t.Errorf("renew %v of a key that never expires: %d %s, want expiresAt null", body, r.Status, r.Raw)
		}
	}
}

// TestEveryPostTakesOrRefusesIdempotencyKey goes through every POST of the
// document with a malformed Idempotency-Key: a route that honours the header
// checks it and one that does not take it refuses it, both 400 naming the
// header; none answers as if it were not there.
func TestEveryPostTakesOrRefusesIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	param := regexp.MustCompile(`\{[^}]+\}`)
	bad := strings.Repeat("k", 256)
	n := 0
	for _, op := range env.Server.Operations() {
		if op.Method != http.MethodPost {
			continue
		}
		n++
		headers := map[string]string{"Idempotency-Key": bad}
		var cookies map[string]string
		path := param.ReplaceAllString(op.Path, "x")
		switch op.Auth {
		case api.AuthKey:
			headers["X-Client-ID"], headers["Authorization"] = tn.ClientID, tn.Key
		case api.AuthSession:
			headers["X-Client-ID"], cookies = tn.ConsoleID, map[string]string{"sid": tn.SID}
			path = strings.Replace(path, "/apps/x", "/apps/"+tn.ClientID, 1)
		case api.AuthAdmin:
			headers["Authorization"] = "Bearer " + env.AdminToken
		}
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Header: headers, Cookies: cookies})
		want := `"field":"Idempotency-Key"`
		if op.Form || op.HTML {
			want = `Idempotency-Key`
		}
		if r.Status != 400 || !strings.Contains(string(r.Raw), want) {
			t.Errorf("%s (%s %s): %d %s", op.ID, op.Method, path, r.Status, r.Raw)
		}
	}
	if n < 40 {
		t.Fatalf("only %d POST operations", n)
	}
}

// TestIdempotencyKeyOnWorkRoutes: the POSTs that start work replay their
// first answer for the same key, and those whose answer holds a secret answer
// 409 naming what the first request changed, never the secret again.
func TestIdempotencyKeyOnWorkRoutes(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "Line 4"})["id"].(string)
	id := tn.CreateRRCA(t, map[string]any{"title": "Leak", "problemStatement": "Oil", "projectId": prj})
	keyed := func(key string, send func(h map[string]string) *apitest.Response) (*apitest.Response, *apitest.Response) {
		h := map[string]string{"Idempotency-Key": key}
		return send(h), send(h)
	}
	resource := func(method, path string, body any) func(h map[string]string) *apitest.Response {
		return func(h map[string]string) *apitest.Response {
			h["X-Client-ID"], h["Authorization"] = tn.ClientID, tn.Key
			return env.Do(t, apitest.Request{Method: method, Path: path, Body: body, Header: h})
		}
	}
	console := func(path string, body any) func(h map[string]string) *apitest.Response {
		return func(h map[string]string) *apitest.Response {
			h["X-Client-ID"] = tn.ConsoleID
			return env.Do(
				t,
				apitest.Request{Method: "POST", Path: path, Body: body, Header: h, Cookies: map[string]string{"sid": tn.SID}},
			)
		}
	}
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "t"})["id"]
	for name, send := range map[string]func(h map[string]string) *apitest.Response{
		"5-why suggest":       resource("POST", apitest.RRCABase+"/"+id+"/5why/suggest", nil),
		"look-across suggest": resource("POST", apitest.RRCABase+"/"+id+"/look-across/suggest", nil),
		"advance":             resource("POST", apitest.RRCABase+"/"+id+"/advance", nil),
		"task update":         resource("POST", apitest.TaskBase+"update", map[string]any{"taskId": task, "title": "u"}),
	} {
		first, again := keyed("work-"+strings.ReplaceAll(name, " ", "-"), send)
		if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" ||
			string(first.Raw) != string(again.Raw) {
			t.Errorf(
				"%s: %d then %d (replayed %q)\n%s\n%s",
				name,
				first.Status,
				again.Status,
				again.Header.Get("Idempotent-Replayed"),
				first.Raw,
				again.Raw,
			)
		}
	}
	if r := tn.Get(t, apitest.RRCABase+"/"+id, nil); r.Str("phase") != "CONTAIN" {
		t.Errorf("a replayed advance moved the analysis again: %s", r.Str("phase"))
	}

	app := "/openapi/v1/apps/" + tn.ClientID
	key := tn.Console(t, "POST", app+"/keys", map[string]any{"scopes": []string{}}).Str("id")
	hook := tn.Console(t, "POST", app+"/webhooks",
		map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"task.created"}}).
		Str("id")
	for name, c := range map[string]struct {
		send   func(h map[string]string) *apitest.Response
		secret string
		id     string
	}{
		"key regenerate":          {console(app+"/keys/"+key+"/regenerate", nil), "apiKey", key},
		"app secret rotation":     {console(app+"/secret/rotate", nil), "secret", tn.ClientID},
		"webhook secret rotation": {console(app+"/webhooks/"+hook+"/rotate-secret", nil), "secret", hook},
	} {
		first, again := keyed("secret-"+strings.ReplaceAll(name, " ", "-"), c.send)
		if first.Status != 201 || first.Str(c.secret) == "" {
			t.Fatalf("%s: %d %s", name, first.Status, first.Raw)
		}
		apitest.WantError(t, again, 409, "CONFLICT")
		if got := again.Body["error"].(map[string]any)["details"].(map[string]any)["id"]; got != c.id ||
			strings.Contains(string(again.Raw), first.Str(c.secret)) {
			t.Errorf("%s replay: %s, want details.id %s and no secret", name, again.Raw, c.id)
		}
	}
	// An operator route keeps no answers: the header is refused, not ignored.
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Body: map[string]any{"name": "w"},
		Header: map[string]string{"Authorization": "Bearer " + env.AdminToken, "Idempotency-Key": "k1"}})
	wantField(t, r, 400, "VALIDATION_FAILED", "Idempotency-Key")
}
