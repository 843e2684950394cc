package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
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

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// crashRig runs `pmapi serve` and `pmapi work` as real processes against the
// test database, with a workspace whose app is subscribed to project.created
// at an HTTPS receiver. hold says which project's delivery the receiver keeps
// unanswered, the first time only (until its connection dies or the test
// ends); every other request is answered 200 at once.
type crashRig struct {
	t       *testing.T
	bin     string
	db      pgcluster.Database
	env     []string
	base    string
	c       *client
	keyH    map[string]string
	wsID    string
	release chan struct{}
	mu      sync.Mutex
	got     []crashHit
	held    chan struct{}
}

type crashHit struct {
	deliveryID, eventID, name string
	at                        time.Time
	held                      bool // never answered
}

func newCrashRig(t *testing.T, hold string, extraEnv ...string) *crashRig {
	// Each rig's processes run over a database of their own: a worker takes
	// every job of the database it serves, another test's deliveries included.
	r := &crashRig{
		t:       t,
		bin:     pmapiBinary(t),
		db:      testdb.ExtraDatabase(t),
		release: make(chan struct{}),
		held:    make(chan struct{}, 1),
	}
	heldOnce := false
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		var b struct {
			EventID string `json:"eventId"`
			Data    struct {
				Name string `json:"name"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &b)
		r.mu.Lock()
		first := b.Data.Name == hold && !heldOnce
		r.got = append(
			r.got,
			crashHit{
				deliveryID: req.Header.Get("X-Service-Delivery-Id"),
				eventID:    b.EventID,
				name:       b.Data.Name,
				at:         time.Now(),
				held:       first,
			},
		)
		heldOnce = heldOnce || first
		r.mu.Unlock()
		if first {
			r.held <- struct{}{}
			select {
			case <-r.release:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(rcv.Close)
	t.Cleanup(func() { close(r.release) })
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	_ = os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.Certificate().Raw}), 0o600)

	addr := freeAddr(t)
	token := "pmadm_crash_test_token_0123456789ab"
	r.env = append(append(
		os.Environ(),
		"PMAPI_DATABASE_URL="+r.db.AppURL,
		"PMAPI_ADDR="+addr,
		"PMAPI_METRICS_ADDR=off",
		"PMAPI_ADMIN_TOKEN="+token,
		"PMAPI_SECRET_KEY="+deploymentSecret,
		"PMAPI_WEBHOOK_ALLOW_LOOPBACK=true",
		"PMAPI_WEBHOOK_CA_FILE="+caFile,
		"PMAPI_SHUTDOWN_GRACE=2s",
		"PMAPI_WEBHOOK_RETRY_SCHEDULE=1s,1s,1s,1s,1s",
	), extraEnv...)
	var serveLogs bytes.Buffer
	r.start("serve", &serveLogs)
	r.base = "http://" + addr
	waitUp(t, r.base+"/healthz", &serveLogs)
	r.c = &client{t: t, base: r.base}
	admin := map[string]string{"Authorization": "Bearer " + token}
	ws := r.c.call("POST", "/admin/v1/workspaces", admin, map[string]any{"name": "crash"})
	r.wsID = ws["workspaceId"].(string)
	user := r.c.call(
		"POST",
		"/admin/v1/workspaces/"+r.wsID+"/users",
		admin,
		map[string]any{"email": "c@example.com", "name": "C"},
	)
	sess := r.c.call("POST", "/admin/v1/workspaces/"+r.wsID+"/users/"+user["id"].(string)+"/sessions", admin, nil)
	console := map[string]string{"X-Client-ID": ws["consoleClientId"].(string), "Cookie": "sid=" + sess["sid"].(string)}
	app := r.c.call(
		"POST",
		"/openapi/v1/apps",
		console,
		map[string]any{"workspaceId": r.wsID, "name": "a", "scopes": []string{"projects:write", "webhooks:read"}},
	)
	clientID := app["clientId"].(string)
	key := r.c.call(
		"POST",
		"/openapi/v1/apps/"+clientID+"/keys",
		console,
		map[string]any{"scopes": []string{"projects:write", "webhooks:read"}},
	)
	r.c.call(
		"POST",
		"/openapi/v1/apps/"+clientID+"/webhooks",
		console,
		map[string]any{"url": rcv.URL, "events": []string{"project.created"}},
	)
	r.keyH = map[string]string{"X-Client-ID": clientID, "Authorization": key["apiKey"].(string)}
	return r
}

func (r *crashRig) start(cmd string, logs *bytes.Buffer) *exec.Cmd {
	c := exec.Command(r.bin, cmd)
	c.Env = r.env
	c.Stdout, c.Stderr = logs, logs
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

func (r *crashRig) project(name string) {
	r.c.call("POST", "/openapi/v1/resource/project/create", r.keyH, map[string]any{"name": name})
}

func (r *crashRig) hits() []crashHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]crashHit(nil), r.got...)
}

// query runs one statement in the workspace's RLS transaction.
func (r *crashRig) query(sql string, dest ...any) {
	r.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.db.AppURL)
	if err != nil {
		r.t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := testdb.BindWorkspace(r.t, tx, r.wsID); err != nil {
			return err
		}
		return tx.QueryRow(context.Background(), sql, r.wsID).Scan(dest...)
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// TestKilledWorkerDeliversEverythingWithinAMinute is the crash with
// the default settings (no shortened rescue): `pmapi work` is killed with
// SIGKILL while one delivery is in flight (the receiver holds it) and ten
// others are recorded; ten more projects are created while no worker runs.
// After a restart every event arrives within a minute, and the only one that
// arrives twice is the one that was in flight, with the same delivery id both
// times (the fan-out sent it, then died before recording it).
func TestKilledWorkerDeliversEverythingWithinAMinute(t *testing.T) {
	t.Parallel()
	r := newCrashRig(t, "in flight")
	var workLogs bytes.Buffer
	worker := r.start("work", &workLogs)
	for i := range 5 {
		r.project(fmt.Sprintf("before %d", i))
	}
	r.project("in flight")
	for i := 5; i < 10; i++ {
		r.project(fmt.Sprintf("before %d", i))
	}
	select {
	case <-r.held:
	case <-time.After(30 * time.Second):
		t.Fatalf("the delivery to hold never arrived\n%s", &workLogs)
	}
	heldAt := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for succeeded := 0; succeeded < 10; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the other 10 deliveries recorded before the kill", succeeded)
		}
		r.query("select count(*) from webhook_deliveries where workspace_id = $1 and status = 'SUCCEEDED'", &succeeded)
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()
	killed := time.Now()
	for i := range 10 {
		r.project(fmt.Sprintf("after %d", i))
	}
	restarted := time.Now()
	r.start("work", &bytes.Buffer{})

	var last time.Time
	for {
		events := map[string]bool{}
		for _, h := range r.hits() {
			if h.held {
				continue
			}
			events[h.eventID] = true
			if h.at.After(last) {
				last = h.at
			}
		}
		if len(events) == 21 {
			break
		}
		if time.Since(restarted) > time.Minute {
			t.Fatalf("%d of 21 events delivered a minute after the restart", len(events))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf(
		"killed %.1f s after the held delivery arrived, restarted %.1f s after the kill; "+
			"every event delivered %.1f s after the restart (rescue after %s)",
		killed.Sub(heldAt).Seconds(),
		restarted.Sub(killed).Seconds(),
		last.Sub(restarted).Seconds(),
		jobs.DefaultRescueAfter,
	)
	time.Sleep(time.Second) // anything else that was coming has come
	byEvent := map[string][]crashHit{}
	for _, h := range r.hits() {
		byEvent[h.eventID] = append(byEvent[h.eventID], h)
	}
	for event, hs := range byEvent {
		switch {
		case hs[0].name == "in flight":
			if len(hs) != 2 || hs[0].deliveryID != hs[1].deliveryID {
				t.Errorf("the delivery in flight arrived %d times with ids %v; want twice with one id", len(hs), hs)
			} else {
				t.Logf("the delivery in flight arrived again %.1f s after the restart", hs[1].at.Sub(restarted).Seconds())
			}
		case len(hs) != 1:
			t.Errorf("event %s (%s) arrived %d times; only the one in flight may repeat", event, hs[0].name, len(hs))
		}
	}
	var waiting, unfanned int
	r.query(
		`select count(*) filter (where status <> 'SUCCEEDED') from webhook_deliveries where workspace_id = $1`,
		&waiting,
	)
	r.query(`select count(*) from events where workspace_id = $1 and fanned_out_at is null`, &unfanned)
	if waiting != 0 || unfanned != 0 {
		t.Errorf("%d deliveries not SUCCEEDED, %d events not fanned out", waiting, unfanned)
	}
}

// TestSIGTERMLetsTheRunningDeliveryFinish sends SIGTERM to a worker mid-delivery:
// it stops taking jobs but finishes the attempt in flight, records it, and exits
// cleanly.
func TestSIGTERMLetsTheRunningDeliveryFinish(t *testing.T) {
	t.Parallel()
	r := newCrashRig(t, "slow")
	var workLogs bytes.Buffer
	worker := r.start("work", &workLogs)
	r.project("slow")
	select {
	case <-r.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the first attempt never arrived")
	}
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the SIGTERM lands mid-request
	r.release <- struct{}{}
	if err := worker.Wait(); err != nil {
		t.Fatalf("the worker did not exit cleanly on SIGTERM: %v\n%s", err, &workLogs)
	}
	if n := len(r.hits()); n != 1 {
		t.Fatalf("%d requests; the drained attempt should be the only one", n)
	}
	var status string
	r.query("select status from webhook_deliveries where workspace_id = $1", &status)
	if status != "SUCCEEDED" {
		t.Fatalf("delivery status %q after a graceful stop", status)
	}
}
