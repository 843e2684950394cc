package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testdb"
)

// TestKilledWorkerLosesNoDelivery runs `pmapi serve` and `pmapi work` as real
// processes, SIGKILLs the worker while its delivery request is in flight, and
// shows a new worker delivers it after River rescues the job.
func TestKilledWorkerLosesNoDelivery(t *testing.T) {
	t.Parallel()
	interruptDelivery(t, syscall.SIGKILL)
}

// TestSIGTERMLetsTheRunningDeliveryFinish sends SIGTERM to a worker mid-delivery:
// it stops taking jobs but finishes the attempt in flight, records it, and exits
// cleanly.
func TestSIGTERMLetsTheRunningDeliveryFinish(t *testing.T) {
	t.Parallel()
	interruptDelivery(t, syscall.SIGTERM)
}

// interruptDelivery runs its processes over a database of their own: a worker
// takes every job of the database it serves, another test's deliveries
// included.
func interruptDelivery(t *testing.T, sig syscall.Signal) {
	bin := pmapiBinary(t)
	db := testdb.ExtraDatabase(t)
	var mu sync.Mutex
	var ids []string
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("X-Service-Delivery-Id"))
		first := len(ids) == 1
		mu.Unlock()
		arrived <- struct{}{}
		if first && sig == syscall.SIGKILL {
			select { // hold the first attempt until its worker is dead
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		if first {
			time.Sleep(time.Second) // answer slowly: the SIGTERM lands mid-request
		}
		w.WriteHeader(200)
	}))
	defer rcv.Close()
	defer close(release)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	_ = os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.Certificate().Raw}), 0o600)

	addr := freeAddr(t)
	token := "pmadm_crash_test_token_0123456789ab"
	env := append(os.Environ(), "PMAPI_DATABASE_URL="+db.AppURL, "PMAPI_ADDR="+addr, "PMAPI_METRICS_ADDR=off",
		"PMAPI_ADMIN_TOKEN="+token, "PMAPI_SECRET_KEY="+deploymentSecret, "PMAPI_WEBHOOK_ALLOW_LOOPBACK=true",
		"PMAPI_WEBHOOK_CA_FILE="+caFile, "PMAPI_JOB_RESCUE_AFTER=2s", "PMAPI_SHUTDOWN_GRACE=2s",
		"PMAPI_WEBHOOK_RETRY_SCHEDULE=1s,1s,1s,1s,1s")
	var serveLogs bytes.Buffer
	start := func(cmd string) *exec.Cmd {
		c := exec.Command(bin, cmd)
		c.Env = env
		logs := &bytes.Buffer{}
		if cmd == "serve" {
			logs = &serveLogs
		}
		c.Stdout, c.Stderr = logs, logs
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	start("serve")
	base := "http://" + addr
	waitUp(t, base+"/healthz", &serveLogs)
	c := &client{t: t, base: base}
	admin := map[string]string{"Authorization": "Bearer " + token}
	ws := c.call("POST", "/admin/v1/workspaces", admin, map[string]any{"name": "crash"})
	wsID := ws["workspaceId"].(string)
	user := c.call("POST", "/admin/v1/workspaces/"+wsID+"/users", admin, map[string]any{"email": "c@example.com", "name": "C"})
	sess := c.call("POST", "/admin/v1/workspaces/"+wsID+"/users/"+user["id"].(string)+"/sessions", admin, nil)
	console := map[string]string{"X-Client-ID": ws["consoleClientId"].(string), "Cookie": "sid=" + sess["sid"].(string)}
	app := c.call("POST", "/openapi/v1/apps", console, map[string]any{"workspaceId": wsID, "name": "a", "scopes": []string{"projects:write", "webhooks:read"}})
	clientID := app["clientId"].(string)
	key := c.call("POST", "/openapi/v1/apps/"+clientID+"/keys", console, map[string]any{"scopes": []string{"projects:write", "webhooks:read"}})
	c.call("POST", "/openapi/v1/apps/"+clientID+"/webhooks", console, map[string]any{"url": rcv.URL, "events": []string{"project.created"}})
	keyH := map[string]string{"X-Client-ID": clientID, "Authorization": key["apiKey"].(string)}
	c.call("POST", "/openapi/v1/resource/project/create", keyH, map[string]any{"name": "delivered after a crash"})

	worker := start("work")
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the first attempt never arrived")
	}
	if err := worker.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := worker.Wait()
	if sig == syscall.SIGTERM {
		if err != nil {
			t.Fatalf("the worker did not exit cleanly on SIGTERM: %v", err)
		}
		mu.Lock()
		n := len(ids)
		mu.Unlock()
		if n != 1 {
			t.Fatalf("%d requests; the drained attempt should be the only one", n)
		}
		waitDelivered(t, db.AppURL, wsID)
		return
	}
	start("work")
	select {
	case <-arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the delivery was lost with its worker")
	}
	mu.Lock()
	if len(ids) < 2 || ids[0] != ids[1] {
		t.Errorf("the rescued attempt must be the same delivery: %v", ids)
	}
	mu.Unlock()
	waitDelivered(t, db.AppURL, wsID)
}

// waitDelivered waits for the workspace's one delivery, in the database at
// url, to be SUCCEEDED.
func waitDelivered(t *testing.T, url, wsID string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var status string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && status != "SUCCEEDED" {
		_ = pgx.BeginFunc(context.Background(), conn, func(tx pgx.Tx) error {
			if err := testdb.BindWorkspace(t, tx, wsID); err != nil {
				return err
			}
			return tx.QueryRow(context.Background(), "select status from webhook_deliveries where workspace_id = $1", wsID).Scan(&status)
		})
		time.Sleep(100 * time.Millisecond)
	}
	if status != "SUCCEEDED" {
		t.Fatalf("delivery status %q after the restart", status)
	}
}
