package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestRequestIDEchoedWhenSane(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	resp := env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "client-chosen-id-123"}},
	)
	if got := resp.Header.Get("X-Request-Id"); got != "client-chosen-id-123" {
		t.Errorf("X-Request-Id = %q, want the client's", got)
	}
	resp = env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "bad id\twith spaces"}},
	)
	if got := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("X-Request-Id = %q, want a generated one for an insane value", got)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	admin := env.Admin()
	cases := []struct {
		name   string
		req    apitest.Request
		status int
		code   string
		field  string
	}{
		{"unknown route", apitest.Request{Method: "GET", Path: "/openapi/v1/nope"}, 404, "NOT_FOUND", ""},
		{
			"malformed JSON",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{"name":`},
			400,
			"VALIDATION_FAILED",
			"",
		},
		{
			"not an object",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `[1,2]`},
			400,
			"VALIDATION_FAILED",
			"",
		},
		{
			"empty body",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin},
			400,
			"VALIDATION_FAILED",
			"",
		},
		{
			"wrong type",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{"name": 42}`},
			400,
			"VALIDATION_FAILED",
			"name",
		},
		{
			"unknown field",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{"name":"x","colour":"red"}`},
			400,
			"VALIDATION_FAILED",
			"colour",
		},
		{
			"missing field",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{}`},
			400,
			"VALIDATION_FAILED",
			"name",
		},
		{
			"trailing data",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{"name":"x"} {}`},
			400,
			"VALIDATION_FAILED",
			"",
		},
		{
			"bad limit",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces?limit=0", Header: admin},
			400,
			"VALIDATION_FAILED",
			"limit",
		},
		{
			"foreign cursor",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces?cursor=bm9wZQ", Header: admin},
			400,
			"VALIDATION_FAILED",
			"cursor",
		},
		{"admin without token", apitest.Request{Method: "GET", Path: "/admin/v1/workspaces"}, 401, "UNAUTHENTICATED", ""},
		{
			"admin with wrong token",
			apitest.Request{
				Method: "GET",
				Path:   "/admin/v1/workspaces",
				Header: map[string]string{"Authorization": "Bearer wrong"},
			},
			401,
			"INVALID_TOKEN",
			"",
		},
		{
			"admin with bare token",
			apitest.Request{
				Method: "GET",
				Path:   "/admin/v1/workspaces",
				Header: map[string]string{"Authorization": env.AdminToken},
			},
			401,
			"UNAUTHENTICATED",
			"",
		},
		{
			"workspace id not a uuid",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/xyz", Header: admin},
			404,
			"NOT_FOUND",
			"",
		},
		{
			"absent workspace",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/01a20674-ff96-758d-9438-aa801a08f580", Header: admin},
			404,
			"NOT_FOUND",
			"",
		},
		{
			"NUL in a string field",
			apitest.Request{Method: "POST", Path: "/admin/v1/workspaces", Header: admin, Body: `{"name":"a\u0000b"}`},
			400,
			"VALIDATION_FAILED",
			"name",
		},
		{
			"NUL in a query parameter",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces?cursor=a%00b", Header: admin},
			400,
			"VALIDATION_FAILED",
			"cursor",
		},
		{
			"query parameter not UTF-8",
			apitest.Request{Method: "GET", Path: "/admin/v1/workspaces?cursor=%ff%fe", Header: admin},
			400,
			"VALIDATION_FAILED",
			"cursor",
		},
		{
			"session without credentials",
			apitest.Request{Method: "GET", Path: "/openapi/v1/session"},
			401,
			"UNAUTHENTICATED",
			"",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := env.Do(t, tc.req)
			if resp.Status != tc.status || resp.ErrorCode() != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", resp.Status, resp.ErrorCode(), tc.status, tc.code, resp.Raw)
			}
			if resp.Body["success"] != false {
				t.Errorf("success = %v, want false", resp.Body["success"])
			}
			e := resp.Body["error"].(map[string]any)
			if e["requestId"] != resp.Header.Get("X-Request-Id") {
				t.Errorf("error.requestId %v differs from header %q", e["requestId"], resp.Header.Get("X-Request-Id"))
			}
			if tc.field != "" {
				if got := e["details"].(map[string]any)["field"]; got != tc.field {
					t.Errorf("details.field = %v, want %s", got, tc.field)
				}
			}
		})
	}
}

func TestBodyOverOneMebibyteIs413(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := env.Listen(t)
	// The server answers from the Content-Length header, before reading the
	// body, so the request is written raw: a client still sending a megabyte
	// would see its connection reset instead of the answer.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(
		conn,
		"POST /admin/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"name\":\"",
		env.AdminToken,
		1<<20+100,
	)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("413 body is not JSON: %s", raw)
	}
	code, _ := body["error"].(map[string]any)["code"].(string)
	if resp.StatusCode != 413 || code != "PAYLOAD_TOO_LARGE" || resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf(
			"got %d %s (request id %q), want 413 PAYLOAD_TOO_LARGE with a request id",
			resp.StatusCode,
			raw,
			resp.Header.Get("X-Request-Id"),
		)
	}
	env.ValidateError(t, raw)
}

func TestPanicBecomes500WithoutInternals(t *testing.T) {
	t.Parallel()
	// Without a directory the list handler dereferences nil: a real panic inside a
	// real route, caught by the app-wide recovery.
	env := apitest.New(t, func(d *apitest.Config) { d.Directory = nil })
	resp := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces", Header: env.Admin()})
	if resp.Status != 500 || resp.ErrorCode() != "INTERNAL" {
		t.Fatalf("got %d %s, want 500 INTERNAL", resp.Status, resp.ErrorCode())
	}
	for _, leak := range []string{"goroutine", "nil pointer", ".go:", "runtime error"} {
		if strings.Contains(string(resp.Raw), leak) {
			t.Errorf("500 body leaks %q: %s", leak, resp.Raw)
		}
	}
	if !strings.Contains(env.Logs.String(), "nil pointer") {
		t.Errorf("the panic's cause is not in the log:\n%s", env.Logs.String())
	}
	// The server keeps serving after a panic.
	if r := env.Do(t, apitest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
		t.Errorf("healthz after panic: %d", r.Status)
	}
}

func TestAdminAPIOffWithoutToken(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(d *apitest.Config) { d.AdminToken = "" })
	resp := env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/admin/v1/workspaces", Header: map[string]string{"Authorization": "Bearer "}},
	)
	if resp.Status != 404 || resp.ErrorCode() != "NOT_FOUND" {
		t.Fatalf("got %d %s, want 404 NOT_FOUND with the admin API off", resp.Status, resp.ErrorCode())
	}
}
