package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestSIGTERMFinishesInFlightRequests runs a real `pmapi serve` process, holds a
// row lock so one request is mid-flight, sends SIGTERM, and shows that the
// process stops accepting, still answers the in-flight request once the lock
// goes, and exits cleanly.
func TestSIGTERMFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	bin := pmapiBinary(t)
	addr := freeAddr(t)
	token := "pmadm_shutdown_test_token_0123456789"
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(
		os.Environ(),
		"PMAPI_DATABASE_URL="+testdb.Database(t).AppURL,
		"PMAPI_ADDR="+addr,
		"PMAPI_METRICS_ADDR=off",
		"PMAPI_ADMIN_TOKEN="+token,
		"PMAPI_SHUTDOWN_GRACE=20s",
		"PMAPI_SECRET_KEY="+deploymentSecret,
	)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := "http://" + addr
	waitUp(t, base+"/healthz", &logs)

	c := &client{t: t, base: base}
	ws := c.call(
		"POST",
		"/admin/v1/workspaces",
		map[string]string{"Authorization": "Bearer " + token},
		map[string]any{"name": "shutdown"},
	)
	wsID, console := ws["workspaceId"].(string), ws["consoleClientId"].(string)
	user := c.call(
		"POST",
		"/admin/v1/workspaces/"+wsID+"/users",
		map[string]string{"Authorization": "Bearer " + token},
		map[string]any{"email": "s@example.com", "name": "S"},
	)
	sess := c.call(
		"POST",
		"/admin/v1/workspaces/"+wsID+"/users/"+user["id"].(string)+"/sessions",
		map[string]string{"Authorization": "Bearer " + token},
		nil,
	)
	consoleH := map[string]string{"X-Client-ID": console, "Cookie": "sid=" + sess["sid"].(string)}
	app := c.call(
		"POST",
		"/openapi/v1/apps",
		consoleH,
		map[string]any{"workspaceId": wsID, "name": "a", "scopes": []string{"projects:write", "projects:read"}},
	)
	key := c.call(
		"POST",
		"/openapi/v1/apps/"+app["clientId"].(string)+"/keys",
		consoleH,
		map[string]any{"scopes": []string{"projects:write"}},
	)
	keyH := map[string]string{"X-Client-ID": app["clientId"].(string), "Authorization": key["apiKey"].(string)}
	prj := c.call("POST", "/openapi/v1/resource/project/create", keyH, map[string]any{"name": "before"})

	// Hold the project's row so its update waits inside the server.
	ctx := context.Background()
	lock, err := testdb.AppPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if err := testdb.BindWorkspace(t, lock, wsID); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, "select 1 from projects where workspace_id = $1 for update", wsID); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		err    error
	}
	inflight := make(chan answer, 1)
	go func() {
		status, _, err := c.do(
			"POST",
			"/openapi/v1/resource/project/update",
			keyH,
			map[string]any{"id": prj["id"], "name": "after"},
		)
		inflight <- answer{status, err}
	}()
	time.Sleep(500 * time.Millisecond) // the request is now waiting on the lock
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-exited:
		t.Fatalf("the process exited with a request in flight: %v\n%s", err, logs.String())
	case a := <-inflight:
		t.Fatalf("the in-flight request ended before its lock was released: %+v", a)
	default:
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Error("the server still accepts connections after SIGTERM")
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-inflight:
		if a.err != nil || a.status != 201 {
			t.Fatalf("in-flight request: %d %v", a.status, a.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the in-flight request was not answered")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the process did not exit after draining")
	}
	// The change the in-flight request made is committed.
	var name string
	err = testdb.InWorkspace(t, testdb.AppPool(t), wsID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "select name from projects where workspace_id = $1", wsID).Scan(&name)
	})
	if err != nil || name != "after" {
		t.Fatalf("project name %q, %v; want the in-flight update committed", name, err)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitUp(t *testing.T, url string, logs fmt.Stringer) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered:\n%s", url, logs)
}

type client struct {
	t    *testing.T
	base string
}

func (c *client) do(method, path string, header map[string]string, body any) (int, map[string]any, error) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, env.Data, err
}

func (c *client) call(method, path string, header map[string]string, body any) map[string]any {
	c.t.Helper()
	status, data, err := c.do(method, path, header, body)
	if err != nil || status >= 300 {
		c.t.Fatalf("%s %s: %d %v", method, path, status, err)
	}
	return data
}
