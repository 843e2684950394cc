package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestKeyAsBearerAndChallenges: an API key is accepted bare or after Bearer
// (any case of the scheme), an access token sent bare is refused with a hint,
// and every 401 carries a WWW-Authenticate challenge in RFC 6750's form (403
// for a missing scope too).
func TestKeyAsBearerAndChallenges(t *testing.T) {
	env, _, tn := oauthEnv(t, 30*time.Second)
	me := func(header map[string]string) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/me", Header: header})
	}
	for _, auth := range []string{tn.Key, "Bearer " + tn.Key, "bearer " + tn.Key, "BEARER  " + tn.Key} {
		if r := me(map[string]string{"X-Client-ID": tn.ClientID, "Authorization": auth}); r.Status != 200 ||
			r.Str("clientId") != tn.ClientID {
			t.Errorf("Authorization %q: %d %s", strings.Replace(auth, tn.Key, "<key>", 1), r.Status, r.Raw)
		}
	}

	challenge := func(r *apitest.Response, status int, code, want string) {
		t.Helper()
		if r.Status != status || r.ErrorCode() != code || r.Header.Get("WWW-Authenticate") != want {
			t.Errorf(
				"got %d %s with WWW-Authenticate %q; want %d %s with %q",
				r.Status,
				r.ErrorCode(),
				r.Header.Get("WWW-Authenticate"),
				status,
				code,
				want,
			)
		}
	}
	// No credential at all: the bare challenge (RFC 6750 section 3.1).
	challenge(me(map[string]string{"X-Client-ID": tn.ClientID}), 401, "UNAUTHENTICATED", `Bearer realm="pmapi"`)
	challenge(
		me(map[string]string{"Authorization": tn.Key}),
		401,
		"UNAUTHENTICATED",
		`Bearer realm="pmapi", error="invalid_request", `+
			`error_description="X-Client-ID and Authorization headers are required"`,
	)
	challenge(me(map[string]string{"X-Client-ID": tn.ClientID, "Authorization": "Bearer pmk_wrong"}), 401, "INVALID_TOKEN",
		`Bearer realm="pmapi", error="invalid_token", error_description="the API key is not valid for this client"`)
	challenge(me(map[string]string{"X-Client-ID": tn.ClientID, "Authorization": "Bearer not.a.jwt"}), 401, "INVALID_TOKEN",
		`Bearer realm="pmapi", error="invalid_token", error_description="the access token is not valid"`)

	// An access token without its scheme is told where Bearer goes.
	dc := deviceCode(t, env, tn.ClientID)
	if r := approve(t, tn, dc["user_code"].(string), "approve"); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	_, tok := poll(t, env, tn.ClientID, dc["device_code"].(string))
	access, _ := tok["access_token"].(string)
	r := me(map[string]string{"X-Client-ID": tn.ClientID, "Authorization": access})
	if r.Status != 401 ||
		!strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "Authorization: Bearer <token>") {
		t.Errorf("access token without Bearer: %d %s", r.Status, r.Raw)
	}
	if r := me(map[string]string{"X-Client-ID": tn.ClientID, "Authorization": "Bearer " + access}); r.Status != 200 {
		t.Errorf("access token with Bearer: %d %s", r.Status, r.Raw)
	}

	// A key without the operation's scope: 403 insufficient_scope naming it.
	narrow := tn.NewKey(t, "tasks:read")
	r = env.Do(
		t,
		apitest.Request{
			Method: "GET",
			Path:   "/openapi/v1/resource/project/list",
			Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": "Bearer " + narrow},
		},
	)
	challenge(r, 403, "INSUFFICIENT_SCOPE", `Bearer realm="pmapi", error="insufficient_scope", scope="projects:read"`)

	// Console calls name their cookie; the operator API its bearer token.
	console := func(cookies map[string]string) *apitest.Response {
		return env.Do(
			t,
			apitest.Request{
				Method:  "GET",
				Path:    "/openapi/v1/apps",
				Header:  map[string]string{"X-Client-ID": tn.ConsoleID},
				Cookies: cookies,
			},
		)
	}
	challenge(console(nil), 401, "UNAUTHENTICATED", `Cookie realm="pmapi console", cookie-name="sid"`)
	challenge(console(map[string]string{"sid": "pms_nope"}), 401, "INVALID_TOKEN",
		`Cookie realm="pmapi console", cookie-name="sid", error="invalid_token", error_description="session is not valid"`)
	challenge(
		env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces"}),
		401,
		"UNAUTHENTICATED",
		`Bearer realm="pmapi admin"`,
	)
	challenge(
		env.Do(
			t,
			apitest.Request{
				Method: "GET",
				Path:   "/admin/v1/workspaces",
				Header: map[string]string{"Authorization": "Bearer pmadm_wrong"},
			},
		),
		401,
		"INVALID_TOKEN",
		`Bearer realm="pmapi admin"`,
	)
}
