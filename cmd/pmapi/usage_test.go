package main

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// usageItems runs `pmapi admin workspace usage ID` as an operator would and
// returns its items by client id ("" for the workspace's own).
func usageItems(t *testing.T, f *fleet, workspace string) map[string]map[string]any {
	t.Helper()
	cmd := exec.Command(f.bin, "admin", "workspace", "usage", workspace, "--from", time.Now().UTC().
		AddDate(0, 0, -1).Format(time.DateOnly))
	cmd.Env = f.env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pmapi admin workspace usage: %v\n%s", err, out)
	}
	var answer struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatalf("usage printed %q: %v", out, err)
	}
	items := map[string]map[string]any{}
	for _, it := range answer.Items {
		client, _ := it["clientId"].(string)
		if it["date"] != time.Now().UTC().Format(time.DateOnly) {
			t.Errorf("an item of %v: every use was today", it["date"])
		}
		items[client] = it
	}
	return items
}

// TestUsageAddsUpAcrossReplicasAndARestart runs two real `pmapi serve`
// replicas and a `pmapi work`, all flushing only when they stop (the flush
// interval is an hour), then restarts one replica. The CLI's usage of the
// workspace is exactly what was sent through all of them: requests by
// status class, the events and their deliveries, counted once each; and a
// second workspace's use is its own.
func TestUsageAddsUpAcrossReplicasAndARestart(t *testing.T) {
	// Not parallel: its processes take ports while no other test is
	// between choosing a free port and binding it (freeAddr).
	var hits atomic.Int32
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(200)
	}))
	t.Cleanup(rcv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	_ = os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.Certificate().Raw}), 0o600)
	token := "pmadm_usage_test_token_0123456789abcd"
	f := newFleet(t, token, "PMAPI_USAGE_FLUSH=1h", "PMAPI_WEBHOOK_ALLOW_LOOPBACK=true", "PMAPI_WEBHOOK_CA_FILE="+caFile)
	a, b, work := f.start("serve"), f.start("serve"), f.start("work")

	one := newFleetApp(t, f.bases[a], token, "projects:write")
	two := newFleetApp(t, f.bases[b], token, "projects:write")
	(&client{t: t, base: f.bases[a]}).call("POST", "/openapi/v1/apps/"+one.clientID+"/webhooks", one.console,
		map[string]any{"url": rcv.URL, "events": []string{"project.created"}})
	send := func(replica int, app fleetApp, n int, want int) {
		t.Helper()
		c := &client{t: t, base: f.bases[replica]}
		for range n {
			var status int
			var err error
			switch want {
			case 200:
				status, _, err = c.do("GET", "/openapi/v1/me", app.key, nil)
			case 201:
				status, _, err = c.do("POST", "/openapi/v1/resource/project/create", app.key,
					map[string]any{"name": "p"})
			default:
				status, _, err = c.do("POST", "/openapi/v1/resource/project/create", app.key, map[string]any{})
			}
			if err != nil || status != want {
				t.Fatalf("request through replica %d: %d %v, want %d", replica, status, err, want)
			}
		}
	}
	send(a, one, 3, 201)
	send(b, one, 4, 200)
	send(b, one, 2, 400)
	send(a, two, 1, 200)
	deadline := time.Now().Add(60 * time.Second)
	for hits.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 deliveries arrived:\n%s", hits.Load(), f.logs[work])
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.stop(a)
	f.stop(b)
	f.stop(work)
	again := f.start("serve")
	send(again, one, 2, 200)
	f.stop(again)

	items := usageItems(t, f, one.workspace)
	app := items[one.clientID]
	want := map[string]float64{"requests2xx": 3 + 4 + 2, "requests4xx": 2, "requests5xx": 0,
		"events": 0, "deliveries": 3, "deliveriesFailed": 0}
	for field, n := range want {
		if app[field] != n {
			t.Errorf("the app's %s = %v, want %v (%v)", field, app[field], n, app)
		}
	}
	if own := items[""]; own == nil || own["events"] != 3.0 || own["clientId"] != nil {
		t.Errorf("the workspace's own item: %v, want its 3 events and a null clientId", own)
	}
	if items[two.clientID] != nil {
		t.Errorf("workspace one's usage lists the other workspace's app: %v", items[two.clientID])
	}
	if other := usageItems(t, f, two.workspace)[two.clientID]; other == nil || other["requests2xx"] != 1.0 {
		t.Errorf("the other workspace's app: %v, want its one request", other)
	}
}
