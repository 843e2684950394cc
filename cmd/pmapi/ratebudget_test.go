package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// fleet is a few real `pmapi serve` processes over one database of their own
// (another test's replicas must not count among them).
type fleet struct {
	t     *testing.T
	bin   string
	env   []string
	procs []*exec.Cmd
	bases []string
	logs  []*bytes.Buffer
	db    string
}

func newFleet(t *testing.T, token string, extraEnv ...string) *fleet {
	db := testdb.ExtraDatabase(t)
	f := &fleet{t: t, bin: pmapiBinary(t), db: db.AppURL}
	f.env = append(append(os.Environ(),
		"PMAPI_DATABASE_URL="+db.AppURL,
		"PMAPI_METRICS_ADDR=off",
		"PMAPI_ADMIN_TOKEN="+token,
		"PMAPI_SECRET_KEY="+deploymentSecret,
		"PMAPI_SHUTDOWN_GRACE=5s",
	), extraEnv...)
	return f
}

// start runs one more `pmapi serve` (command "serve") or `pmapi work`, and
// returns its index.
func (f *fleet) start(command string) int {
	addr := freeAddr(f.t)
	cmd := exec.Command(f.bin, command)
	cmd.Env = append(f.env, "PMAPI_ADDR="+addr)
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	if command == "serve" {
		waitUp(f.t, base+"/healthz", logs)
	}
	f.procs, f.bases, f.logs = append(f.procs, cmd), append(f.bases, base), append(f.logs, logs)
	return len(f.procs) - 1
}

// stop ends process i gracefully and waits for it.
func (f *fleet) stop(i int) {
	f.t.Helper()
	_ = f.procs[i].Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- f.procs[i].Wait() }()
	select {
	case err := <-done:
		if err != nil {
			f.t.Fatalf("process %d: %v\n%s", i, err, f.logs[i])
		}
	case <-time.After(20 * time.Second):
		f.t.Fatalf("process %d did not stop:\n%s", i, f.logs[i])
	}
}

// liveReplicas counts the rows of serve_replicas seen within the expiry.
func (f *fleet) liveReplicas(expiry time.Duration) int {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.db)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var n int
	err = conn.QueryRow(ctx, `select count(*) from serve_replicas where seen_at > now() - $1::interval`, expiry).Scan(&n)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// fleetApp is a workspace, its console session and an app with a key.
type fleetApp struct {
	workspace, clientID string
	console, key        map[string]string
}

// newFleetApp makes a workspace, an app in it and a key with scopes,
// through the admin and console routes of base.
func newFleetApp(t *testing.T, base, token string, scopes ...string) fleetApp {
	c := &client{t: t, base: base}
	admin := map[string]string{"Authorization": "Bearer " + token}
	ws := c.call("POST", "/admin/v1/workspaces", admin, map[string]any{"name": "fleet"})
	wsID := ws["workspaceId"].(string)
	user := c.call("POST", "/admin/v1/workspaces/"+wsID+"/users", admin,
		map[string]any{"email": "f@example.com", "name": "F"})
	sess := c.call("POST", "/admin/v1/workspaces/"+wsID+"/users/"+user["id"].(string)+"/sessions", admin, nil)
	console := map[string]string{"X-Client-ID": ws["consoleClientId"].(string), "Cookie": "sid=" + sess["sid"].(string)}
	app := c.call("POST", "/openapi/v1/apps", console,
		map[string]any{"workspaceId": wsID, "name": "a", "scopes": scopes})
	clientID := app["clientId"].(string)
	key := c.call("POST", "/openapi/v1/apps/"+clientID+"/keys", console, map[string]any{"scopes": scopes})
	return fleetApp{workspace: wsID, clientID: clientID, console: console,
		key: map[string]string{"X-Client-ID": clientID, "Authorization": key["apiKey"].(string)}}
}

// tally is what one phase of load got back.
type tally struct {
	mu               sync.Mutex
	accepted, denied int
	other            []string
	badHeaders       int
}

// offer sends GET /openapi/v1/me at rate a second for d, round robin over
// bases, without waiting for answers before the next send: an open loop, so
// a slow answer does not lower the offered load.
func offer(t *testing.T, hc *http.Client, bases []string, headers map[string]string, rate float64,
	d time.Duration) *tally {
	out := &tally{}
	var wg sync.WaitGroup
	every := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		base := bases[i%len(bases)]
		wg.Go(func() {
			req, _ := http.NewRequest("GET", base+"/openapi/v1/me", nil)
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := hc.Do(req)
			out.mu.Lock()
			defer out.mu.Unlock()
			if err != nil {
				out.other = append(out.other, err.Error())
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				out.accepted++
			case 429:
				out.denied++
				if resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-RateLimit-Limit") != "600" ||
					resp.Header.Get("X-RateLimit-Remaining") != "0" {
					out.badHeaders++
				}
			default:
				out.other = append(out.other, resp.Status)
			}
		})
		if sleep := time.Until(start.Add(time.Duration(i+1) * every)); sleep > 0 {
			time.Sleep(sleep)
		}
	}
	wg.Wait()
	return out
}

// TestReplicasShareOneRateBudget: three real `pmapi serve` replicas over one
// database, one key driven at twice its limit through all three. The
// accepted rate is the limit within 10 %, not three times it; after one
// replica is killed (no goodbye: its heartbeat just stops), the two left take
// its share within seconds and the accepted rate is the limit again.
func TestReplicasShareOneRateBudget(t *testing.T) {
	// Not parallel: its processes take ports while no other test is
	// between choosing a free port and binding it (freeAddr).
	const (
		perMinute = 600
		perSecond = perMinute / 60.0
		heartbeat = 500 * time.Millisecond
		expiry    = 4 * heartbeat
	)
	token := "pmadm_budget_test_token_0123456789abc"
	f := newFleet(t, token, "PMAPI_RATE_LIMIT_PER_MINUTE=600", "PMAPI_REPLICA_HEARTBEAT="+heartbeat.String())
	for range 3 {
		f.start("serve")
	}
	key := newFleetApp(t, f.bases[0], token, "projects:read").key
	deadline := time.Now().Add(30 * time.Second)
	for f.liveReplicas(expiry) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas never all registered: %d live", f.liveReplicas(expiry))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * heartbeat) // every replica has counted the three
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	// Spend the burst (a minute's allowance in all) fast, then settle at
	// twice the rate before measuring, so the window starts with every
	// replica's part empty.
	drain := offer(t, hc, f.bases, key, 300, 3*time.Second)
	if drain.denied == 0 {
		t.Fatalf("no request refused while spending the burst: %+v", drain)
	}
	offer(t, hc, f.bases, key, 2*perSecond, 2*time.Second)

	const window = 20 * time.Second
	three := offer(t, hc, f.bases, key, 2*perSecond, window)
	rate := float64(three.accepted) / window.Seconds()
	t.Logf("three replicas: %d accepted, %d refused in %s: %.2f/s for a limit of %.0f/s",
		three.accepted, three.denied, window, rate, perSecond)
	if len(three.other) > 0 || three.badHeaders > 0 {
		t.Errorf("unexpected answers: %v; 429s without truthful headers: %d", three.other, three.badHeaders)
	}
	if rate < 0.9*perSecond || rate > 1.1*perSecond {
		t.Errorf("accepted %.2f/s through three replicas, want the limit %.0f/s within 10 %%", rate, perSecond)
	}

	// One replica dies. Its row stops counting after the expiry; the two
	// left refill at half the rate each from their next heartbeat.
	_ = f.procs[2].Process.Kill()
	survivors := f.bases[:2]
	recovery := offer(t, hc, survivors, key, 2*perSecond, expiry+4*heartbeat)
	if n := f.liveReplicas(expiry); n != 2 {
		t.Errorf("%d live replicas after the kill and the expiry, want 2", n)
	}
	two := offer(t, hc, survivors, key, 2*perSecond, window)
	rate = float64(two.accepted) / window.Seconds()
	t.Logf("after the kill: %d accepted while it expired (%s), then %d in %s: %.2f/s",
		recovery.accepted, expiry+4*heartbeat, two.accepted, window, rate)
	if len(two.other) > 0 {
		t.Errorf("unexpected answers from the survivors: %v", two.other)
	}
	if rate < 0.9*perSecond || rate > 1.1*perSecond {
		t.Errorf("accepted %.2f/s through the two left, want the limit %.0f/s within 10 %%", rate, perSecond)
	}
}
