package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func wantField(t *testing.T, r *apitest.Response, status int, code, field string) {
	t.Helper()
	apitest.WantError(t, r, status, code)
	if got := r.Body["error"].(map[string]any)["details"].(map[string]any)["field"]; got != field {
		t.Fatalf("details.field %v, want %s: %s", got, field, r.Raw)
	}
}

// TestDatesOutsideYears1To9999 sends dates PostgreSQL or the event's JSON
// cannot hold (year 0, or past 9999 once in UTC) to every write taking one:
// each is 400 naming the field, and nothing is written.
func TestDatesOutsideYears1To9999(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "dates"})["id"].(string)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "t"})["id"].(string)
	rca := tn.CreateRRCA(t, map[string]any{"title": "a", "problemStatement": "p", "projectId": prj})
	root := tn.AddNode(t, rca, "ROOT_CAUSE", "r", "")
	for _, bad := range []string{"0000-01-01T00:00:00+14:00", "9999-12-31T23:00:00-05:00", "0000-06-01T00:00:00Z"} {
		wantField(t, tn.Do(t, "POST", apitest.TaskBase+"create",
			map[string]any{"projectId": prj, "title": "x", "dueDate": bad}), 400, "VALIDATION_FAILED", "dueDate")
		wantField(t, tn.Do(t, "POST", apitest.TaskBase+"create",
			map[string]any{"projectId": prj, "title": "x", "startDate": bad}), 400, "VALIDATION_FAILED", "startDate")
		wantField(t, tn.Do(t, "POST", apitest.TaskBase+"update", map[string]any{"taskId": task, "dueDate": bad}), 400,
			"VALIDATION_FAILED", "dueDate")
		for _, atomic := range []bool{true, false} {
			r := tn.Do(t, "POST", apitest.TaskBase+"batch", map[string]any{"atomic": atomic, "operations": []any{
				map[string]any{"op": "create", "projectId": prj, "title": "ok"},
				map[string]any{"op": "create", "projectId": prj, "title": "x", "dueDate": bad},
			}})
			if r.Status >= 500 || strings.Contains(string(r.Raw), `"code":"INTERNAL"`) ||
				!strings.Contains(string(r.Raw), `"field":"dueDate"`) {
				t.Errorf("batch (atomic %v) with dueDate %s: %d %s", atomic, bad, r.Status, r.Raw)
			}
		}
		wantField(t, tn.Do(t, "POST", apitest.ActionItemBase+"create", map[string]any{"title": "x", "dueDate": bad}),
			400, "VALIDATION_FAILED", "dueDate")
		wantField(t, tn.Do(t, "POST", apitest.RRCABase+"/"+rca+"/corrective-actions",
			map[string]any{"nodeId": root, "title": "x", "dueDate": bad}), 400, "VALIDATION_FAILED", "dueDate")
	}
	wantField(t, tn.Do(t, "POST", apitest.ProjectBase+"create",
		map[string]any{"name": "x", "startDate": "0000-01-01"}), 400, "VALIDATION_FAILED", "startDate")
	wantField(t, tn.Do(t, "POST", apitest.ProjectBase+"update", map[string]any{"id": prj, "targetDate": "0000-12-31"}),
		400, "VALIDATION_FAILED", "targetDate")
	if n := len(tn.Get(t, apitest.ProjectBase+"list", nil).Items()); n != 1 {
		t.Errorf("%d projects, want only the first", n)
	}
	// The non-atomic batches each wrote their valid "ok" task; nothing else.
	for _, it := range tn.Get(t, apitest.TaskBase+"list", map[string]string{"projectId": prj}).Items() {
		if it["title"] == "x" || it["dueDate"] != nil {
			t.Errorf("a refused task was written: %v", it)
		}
	}
	if n := len(tn.Get(t, apitest.ActionItemBase+"list", nil).Items()); n != 0 {
		t.Errorf("%d action items written", n)
	}
	// The edges themselves are fine.
	for _, ok := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"} {
		if r := tn.Do(t, "POST", apitest.TaskBase+"update",
			map[string]any{"taskId": task, "dueDate": ok}); r.Status != 201 {
			t.Errorf("dueDate %s: %d %s", ok, r.Status, r.Raw)
		}
	}
}

// TestBodyMustBeDeclaredJSON: a body declared as anything but JSON is 415
// and not read; application/json with parameters, +json types and a body
// without a Content-Type are read as JSON (docs/decisions/envelope-and-errors.md).
func TestBodyMustBeDeclaredJSON(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	env := apitest.Shared(t)
	send := func(contentType string) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "POST", Path: apitest.ProjectBase + "create",
			Body:   `{"name":"typed"}`,
			Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "Content-Type": contentType}})
	}
	for _, ct := range []string{
		"application/xml", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
		"application/jsonx", "json", ";;",
	} {
		apitest.WantError(t, send(ct), 415, "UNSUPPORTED_MEDIA_TYPE")
	}
	if n := len(tn.Get(t, apitest.ProjectBase+"list", nil).Items()); n != 0 {
		t.Fatalf("a refused body created %d projects", n)
	}
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json", "",
	} {
		if r := send(ct); r.Status != 201 {
			t.Errorf("Content-Type %q: %d %s", ct, r.Status, r.Raw)
		}
	}
}

// TestTextMustBeUnicode: bytes that are not UTF-8 and \u escapes of lone
// surrogates are 400 naming the field, where encoding/json would have stored
// U+FFFD; a surrogate pair and a literal backslash-u are text like any other.
func TestTextMustBeUnicode(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	for name, body := range map[string]string{
		"invalid UTF-8":      "{\"name\":\"a\xff\xfeb\"}",
		"truncated sequence": "{\"name\":\"caf\xc3\"}",
		"lone high":          `{"name":"a\ud800b"}`,
		"lone low":           `{"name":"a\udc00b"}`,
		"high at the end":    `{"name":"\ud83d"}`,
		"high then a letter": `{"name":"\ud83d\u0041"}`,
		"reversed pair":      `{"name":"\ude00\ud83d"}`,
		"nested":             `{"name":"ok","description":"x\uDBFF"}`,
	} {
		field := "name"
		if name == "nested" {
			field = "description"
		}
		r := tn.Do(t, "POST", apitest.ProjectBase+"create", body)
		if r.Status != 400 || !strings.Contains(string(r.Raw), `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if n := len(tn.Get(t, apitest.ProjectBase+"list", nil).Items()); n != 0 {
		t.Fatalf("refused text created %d projects", n)
	}
	for body, want := range map[string]string{
		`{"name":"smile \ud83d\ude00"}`: "smile \U0001F600",
		`{"name":"back\\ud800slash"}`:   `back\ud800slash`,
		`{"name":"caf\u00e9"}`:          "café",
	} {
		r := tn.Do(t, "POST", apitest.ProjectBase+"create", body)
		if r.Status != 201 || r.Str("name") != want {
			t.Errorf("%s: %d %s, want name %q", body, r.Status, r.Raw, want)
		}
	}
}

// TestQueryParametersAreSingleAndFilled: an empty number and any parameter
// given twice are 400 naming it; an empty text filter stays "no filter".
func TestQueryParametersAreSingleAndFilled(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	for path, field := range map[string]string{
		apitest.TaskBase + "list?limit=":                   "limit",
		apitest.TaskBase + "list?limit=1&limit=2":          "limit",
		apitest.TaskBase + "list?limit=5&limit=5":          "limit",
		apitest.TaskBase + "list?status=TODO&status=DONE":  "status",
		apitest.TaskBase + "list?includeArchived=":         "includeArchived",
		apitest.TaskBase + "list?dueAfter=":                "dueAfter",
		apitest.TaskBase + "list?projectId=":               "projectId",
		apitest.ProjectBase + "detail?id=a&id=b":           "id",
		"/openapi/v1/resource/search?q=a&q=b":              "q",
		apitest.RRCABase + "?limit=2&phase=DEFINE&limit=3": "limit",
	} {
		wantField(t, tn.Do(t, "GET", path, nil), 400, "VALIDATION_FAILED", field)
	}
	for _, path := range []string{apitest.TaskBase + "list?q=", apitest.TaskBase + "list?status=&cursor=",
		apitest.TaskBase + "list?limit=3"} {
		if r := tn.Do(t, "GET", path, nil); r.Status != 200 {
			t.Errorf("%s: %d %s", path, r.Status, r.Raw)
		}
	}
}

// TestUnknownMethodGetsTheEnvelope: a method the server does not know is 501
// NOT_IMPLEMENTED in the error envelope with a request id, not Fiber's
// text/plain 400.
func TestUnknownMethodGetsTheEnvelope(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	for _, m := range []string{"FOO", "PROPFIND", "BREW"} {
		r := env.Do(t, apitest.Request{Method: m, Path: apitest.ProjectBase + "list"})
		apitest.WantError(t, r, 501, "NOT_IMPLEMENTED")
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: headers %v", m, r.Header)
		}
	}
	// A known method on a route without it stays 405.
	apitest.WantError(t, env.Do(t, apitest.Request{Method: "DELETE", Path: apitest.ProjectBase + "list"}),
		405, "METHOD_NOT_ALLOWED")
}

// TestContentLengthWithTransferEncodingIsRefused sends, on a real socket, a
// request framed both ways (the shape of request smuggling): it is answered
// 400 with the envelope and the connection is closed, so nothing after it on
// the connection is read as a request.
func TestContentLengthWithTransferEncodingIsRefused(t *testing.T) {
	t.Parallel()
	addr := apitest.New(t).Listen(t)
	for name, headers := range map[string]string{
		"length first":   "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
		"encoding first": "Transfer-Encoding: chunked\r\ncontent-length: 4\r\n",
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		smuggled := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
		_, err = io.WriteString(conn,
			"POST "+apitest.ProjectBase+"create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+headers+
				"\r\n2\r\n{}\r\n0\r\n\r\n"+smuggled)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"success":false`) || !resp.Close {
			t.Errorf("%s: %d close=%v %s", name, resp.StatusCode, resp.Close, body)
		}
		if rest, err := br.ReadString('\n'); err == nil || rest != "" {
			t.Errorf("%s: the connection stayed open and answered %q", name, rest)
		}
		conn.Close()
	}
}
