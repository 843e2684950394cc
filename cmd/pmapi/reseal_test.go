package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// TestSecretKeyRotationUnderLoad follows the runbook (docs/operations.md,
// "Rotating PMAPI_SECRET_KEY") as a rolling update would, each step's
// instances overlapping the previous step's, while clients keep creating
// projects (each delivered to signed webhooks), creating subscriptions and
// rotating their secrets, and refreshing and using OAuth tokens:
//
//	A: K1                   (before)
//	B: K1, previous K2      (every instance can read K2 before any seals under it)
//	C: K2, previous K1      (new values under K2; an OAuth key rotation)
//	   pmapi admin reseal   (twice: the second finds nothing left)
//	D: K2                   (previous dropped)
//
// Nothing may fail: every request answers 2xx, every delivery succeeds at its
// first attempt with a signature the receiver verifies, no job records an
// error, and at the end every sealed value opens under K2 alone.
func TestSecretKeyRotationUnderLoad(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	rcv := newReceiver(t)
	k1, k2 := seal.Random(), seal.Random()
	token := "pmadm_rotation_test_token_0123456789"
	for k, v := range map[string]string{
		"PMAPI_DATABASE_URL":           db.AppURL,
		"PMAPI_METRICS_ADDR":           "off",
		"PMAPI_ADMIN_TOKEN":            token,
		"PMAPI_LOG_LEVEL":              "warn",
		"PMAPI_WEBHOOK_ALLOW_LOOPBACK": "true",
		"PMAPI_WEBHOOK_CA_FILE":        rcv.caFile,
		"PMAPI_SHUTDOWN_GRACE":         "20s",
		"PMAPI_JOB_WORKERS":            "4",
		"PMAPI_RATE_LIMIT_PER_MINUTE":  "1000000",
		"PMAPI_WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s,1s",
		"PMAPI_TENANT_SETTING":         testdb.TenantSetting(t).String(),
		"PMAPI_SECRET_KEY":             k1,
		"PMAPI_SECRET_KEY_PREVIOUS":    "",
	} {
		t.Setenv(k, v)
	}
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	withKeys := func(current string, previous ...string) config {
		c := cfg
		c.SecretKey, c.SecretKeyPrevious = current, previous
		return c
	}
	lb := &balancer{inFlight: map[string]int{}}
	a := startInstance(t, withKeys(k1))
	lb.set(a.base)
	l := newLoad(t, lb, token, rcv)

	l.run()
	time.Sleep(time.Second)
	b := startInstance(t, withKeys(k1, k2))
	lb.set(a.base, b.base)
	time.Sleep(500 * time.Millisecond)
	lb.retire(a)
	time.Sleep(time.Second)

	c := startInstance(t, withKeys(k2, k1))
	lb.set(b.base, c.base)
	time.Sleep(500 * time.Millisecond)
	boxC, err := secretBox(withKeys(k2, k1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authz.NewKeyRing(c.s.dir.Pool(), boxC).Rotate(ctx, cfg.OAuthAccessTTL); err != nil {
		t.Fatalf("OAuth key rotation under K2: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	lb.retire(b)
	time.Sleep(500 * time.Millisecond)

	t.Setenv("PMAPI_SECRET_KEY", k2)
	t.Setenv("PMAPI_SECRET_KEY_PREVIOUS", " "+k1+" ,")
	first := reseal(t)
	t.Logf("first reseal: %+v", first.Columns)
	if first.KeyID != boxC.KeyID() {
		t.Errorf("reseal under key %s, want %s", first.KeyID, boxC.KeyID())
	}
	for _, col := range first.Columns {
		if len(col.Failed) > 0 || (col.Column != "previous_secret_sealed" && col.Resealed == 0) {
			t.Errorf("first reseal of %s.%s: %+v", col.Table, col.Column, col)
		}
	}
	for _, col := range reseal(t).Columns {
		if col.Resealed != 0 || len(col.Failed) > 0 || col.Current == 0 {
			t.Errorf("second reseal of %s.%s: %+v; want everything current", col.Table, col.Column, col)
		}
	}
	time.Sleep(500 * time.Millisecond)

	t.Setenv("PMAPI_SECRET_KEY_PREVIOUS", "")
	d := startInstance(t, withKeys(k2))
	lb.set(c.base, d.base)
	time.Sleep(500 * time.Millisecond)
	lb.retire(c)
	time.Sleep(1500 * time.Millisecond)
	l.stop()

	l.check(t, d, db.AppURL, k2)
	lb.retire(d)
}

// reseal runs `pmapi admin reseal` with the environment's keys.
func reseal(t *testing.T) resealResult {
	t.Helper()
	var out bytes.Buffer
	if err := runAdmin(context.Background(), []string{"reseal"}, &out); err != nil {
		t.Fatalf("reseal: %v\n%s", err, out.String())
	}
	var r resealResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Columns) != 3 {
		t.Fatalf("reseal printed %s (%v)", out.String(), err)
	}
	return r
}

// instance is one pod: API and workers in one process, as `pmapi dev` runs.
type instance struct {
	s      *server
	base   string
	cancel context.CancelFunc
	done   chan struct{} // closed once run has returned
}

func startInstance(t *testing.T, cfg config) *instance {
	t.Helper()
	s, err := startServer(context.Background(), cfg, true, true)
	if err != nil {
		t.Fatalf("start with %d previous keys: %v", len(cfg.SecretKeyPrevious), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{s: s, cancel: cancel, done: make(chan struct{})}
	bound := make(chan string, 1)
	var runErr error
	go func() {
		defer close(in.done)
		runErr = s.run(ctx, "127.0.0.1:0", func(a net.Addr) { bound <- a.String() })
	}()
	select {
	case a := <-bound:
		in.base = "http://" + a
	case <-in.done:
		t.Fatalf("instance stopped at once: %v", runErr)
	}
	t.Cleanup(func() {
		cancel()
		<-in.done
	})
	return in
}

// balancer spreads the load over the live instances and drains one before it
// stops, as a Service does with a terminating pod's endpoint.
type balancer struct {
	mu       sync.Mutex
	live     []string
	next     int
	inFlight map[string]int
}

func (b *balancer) set(live ...string) {
	b.mu.Lock()
	b.live = live
	b.mu.Unlock()
}

func (b *balancer) acquire() (string, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	base := b.live[b.next%len(b.live)]
	b.next++
	b.inFlight[base]++
	return base, func() {
		b.mu.Lock()
		b.inFlight[base]--
		b.mu.Unlock()
	}
}

// retire stops in once no request is on its way to it (the caller has taken
// it out of the live set).
func (b *balancer) retire(in *instance) {
	b.mu.Lock()
	var live []string
	for _, l := range b.live {
		if l != in.base {
			live = append(live, l)
		}
	}
	if len(live) > 0 {
		b.live = live
	}
	b.mu.Unlock()
	for {
		b.mu.Lock()
		n := b.inFlight[in.base]
		b.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	in.cancel()
	<-in.done
}

// receiver is a webhook endpoint that keeps what arrives, to check the
// signatures against the secrets at the end.
type receiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	got    []arrival
}

type arrival struct {
	path, delivery, signature string
	body                      []byte
	at                        time.Time
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, arrival{path: req.URL.Path, delivery: req.Header.Get("X-Service-Delivery-Id"),
			signature: req.Header.Get(webhook.SignatureHeader), body: body, at: time.Now()})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	r.caFile = filepath.Join(t.TempDir(), "ca.pem")
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(r.caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// load is what clients do throughout the rotation.
type load struct {
	lb        *balancer
	rcv       *receiver
	http      *http.Client
	ws        string
	console   map[string]string
	keyH      map[string]string
	clientID  string
	refresh   string
	firstJWT  string
	projects  atomic.Int64
	oauthRuns atomic.Int64
	churns    atomic.Int64
	stopc     chan struct{}
	wg        sync.WaitGroup

	mu       sync.Mutex
	failures []string
	secrets  map[string][]string // receiver path -> every secret it was given
	subs     []string            // churned subscription ids
}

func (l *load) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, args...))
	}
}

// do sends one request through the balancer; form bodies are url.Values.
func (l *load) do(method, path string, header map[string]string, body any) (int, map[string]any) {
	base, done := l.lb.acquire()
	defer done()
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", ctype)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := l.http.Do(req)
	if err != nil {
		l.fail("%s %s via %s: %v", method, path, base, err)
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		l.fail("%s %s via %s: %d %v", method, path, base, resp.StatusCode, out)
	}
	if data, ok := out["data"].(map[string]any); ok {
		return resp.StatusCode, data
	}
	return resp.StatusCode, out
}

func newLoad(t *testing.T, lb *balancer, token string, rcv *receiver) *load {
	t.Helper()
	l := &load{
		lb:      lb,
		rcv:     rcv,
		http:    &http.Client{Timeout: 30 * time.Second},
		stopc:   make(chan struct{}),
		secrets: map[string][]string{},
	}
	must := func(status int, data map[string]any) map[string]any {
		t.Helper()
		if status >= 300 {
			t.Fatalf("setup: %d %v %v", status, data, l.failures)
		}
		return data
	}
	admin := map[string]string{"Authorization": "Bearer " + token}
	ws := must(l.do("POST", "/admin/v1/workspaces", admin, map[string]any{"name": "rotation"}))
	l.ws = ws["workspaceId"].(string)
	user := must(
		l.do("POST", "/admin/v1/workspaces/"+l.ws+"/users", admin, map[string]any{"email": "r@example.com", "name": "R"}),
	)
	sess := must(l.do("POST", "/admin/v1/workspaces/"+l.ws+"/users/"+user["id"].(string)+"/sessions", admin, nil))
	l.console = map[string]string{"X-Client-ID": ws["consoleClientId"].(string), "Cookie": "sid=" + sess["sid"].(string)}
	scopes := []string{"projects:write", "projects:read"}
	app := must(
		l.do("POST", "/openapi/v1/apps", l.console, map[string]any{"workspaceId": l.ws, "name": "a", "scopes": scopes}),
	)
	l.clientID = app["clientId"].(string)
	key := must(l.do("POST", "/openapi/v1/apps/"+l.clientID+"/keys", l.console, map[string]any{"scopes": scopes}))
	l.keyH = map[string]string{"X-Client-ID": l.clientID, "Authorization": key["apiKey"].(string)}
	l.subscribe("/steady")

	dc := must(l.do("POST", "/openapi/v1/oauth/device/code", nil, url.Values{"client_id": {l.clientID}}))
	must(
		l.do(
			"POST",
			"/openapi/v1/oauth/device/approve",
			l.console,
			map[string]any{"user_code": dc["user_code"], "action": "approve"},
		),
	)
	tok := must(
		l.do(
			"POST",
			"/openapi/v1/oauth/token",
			nil,
			url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
				"device_code": {dc["device_code"].(string)}, "client_id": {l.clientID}},
		),
	)
	l.refresh, l.firstJWT = tok["refresh_token"].(string), tok["access_token"].(string)
	if len(l.failures) > 0 {
		t.Fatalf("setup: %v", l.failures)
	}
	return l
}

func (l *load) subscribe(path string) {
	status, sub := l.do("POST", "/openapi/v1/apps/"+l.clientID+"/webhooks", l.console,
		map[string]any{"url": l.rcv.srv.URL + path, "events": []string{"project.created"}})
	if status != 201 {
		return
	}
	l.mu.Lock()
	l.secrets[path] = append(l.secrets[path], sub["secret"].(string))
	if path != "/steady" {
		l.subs = append(l.subs, sub["id"].(string))
	}
	l.mu.Unlock()
}

func (l *load) every(d time.Duration, fn func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			select {
			case <-l.stopc:
				return
			case <-time.After(d):
				fn()
			}
		}
	}()
}

func (l *load) run() {
	l.every(40*time.Millisecond, func() {
		status, _ := l.do("POST", "/openapi/v1/resource/project/create", l.keyH, map[string]any{"name": "p"})
		if status == 201 {
			l.projects.Add(1)
		}
	})
	l.every(30*time.Millisecond, func() {
		_, tok := l.do(
			"POST",
			"/openapi/v1/oauth/token",
			nil,
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {l.refresh}, "client_id": {l.clientID}},
		)
		access, _ := tok["access_token"].(string)
		if access == "" {
			return
		}
		l.refresh = tok["refresh_token"].(string)
		headers := map[string]string{"X-Client-ID": l.clientID, "Authorization": "Bearer " + access}
		if status, _ := l.do("GET", "/openapi/v1/me", headers, nil); status == 200 {
			l.oauthRuns.Add(1)
		}
	})
	l.every(150*time.Millisecond, func() {
		n := l.churns.Add(1)
		l.mu.Lock()
		subs := len(l.subs)
		l.mu.Unlock()
		if subs < 4 {
			l.subscribe(fmt.Sprintf("/churn-%d", n))
			return
		}
		l.mu.Lock()
		id := l.subs[int(n)%subs]
		l.mu.Unlock()
		grace := 3600
		status, rot := l.do(
			"POST",
			"/openapi/v1/apps/"+l.clientID+"/webhooks/"+id+"/rotate-secret",
			l.console,
			map[string]any{"graceSeconds": grace},
		)
		if status == 201 || status == 200 {
			path := strings.TrimPrefix(rot["url"].(string), l.rcv.srv.URL)
			l.mu.Lock()
			l.secrets[path] = append(l.secrets[path], rot["secret"].(string))
			l.mu.Unlock()
		}
	})
}

func (l *load) stop() {
	close(l.stopc)
	l.wg.Wait()
}

// check waits for the deliveries to finish on in (the last instance) and
// holds everything to "nothing failed".
func (l *load) check(t *testing.T, in *instance, appURL, onlyKey string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range l.failures {
		t.Errorf("client failure: %s", f)
	}
	if l.projects.Load() < 20 || l.oauthRuns.Load() < 20 || l.churns.Load() < 10 {
		t.Errorf(
			"too little load: %d projects, %d OAuth refreshes and uses, %d subscription changes",
			l.projects.Load(),
			l.oauthRuns.Load(),
			l.churns.Load(),
		)
	}
	headers := map[string]string{"X-Client-ID": l.clientID, "Authorization": "Bearer " + l.firstJWT}
	if status, _ := l.do("GET", "/openapi/v1/me", headers, nil); status != 200 {
		t.Errorf("the first access token (signed before the rotation) no longer verifies: %d", status)
	}
	pool := testdb.Pool(t, appURL)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	ws := uuid.MustParse(l.ws)
	var pending, notFirstTry, total, steady int
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := shard.Read(ctx, ws, func(b *pgx.Batch) {
			b.Queue(`select count(*) filter (where d.status <> 'SUCCEEDED'), count(*) filter (where d.attempts <> 1), count(*),
				count(*) filter (where s.url like '%/steady')
				from webhook_deliveries d join webhook_subscriptions s
				  on s.workspace_id = d.workspace_id and s.id = d.subscription_id
				where d.workspace_id = $1`, ws).
				QueryRow(func(r pgx.Row) error { return r.Scan(&pending, &notFirstTry, &total, &steady) })
		}); err != nil {
			t.Fatal(err)
		}
		if (pending == 0 && int64(steady) == l.projects.Load()) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf(
		"%d projects, %d OAuth refreshes and uses, %d subscription changes, %d deliveries",
		l.projects.Load(),
		l.oauthRuns.Load(),
		l.churns.Load(),
		total,
	)
	if pending != 0 || notFirstTry != 0 || int64(steady) != l.projects.Load() {
		t.Errorf(
			"deliveries: %d of %d not SUCCEEDED, %d not at the first attempt; %d to the steady subscription for %d projects",
			pending,
			total,
			notFirstTry,
			steady,
			l.projects.Load(),
		)
	}
	var jobErrors int
	if err := pool.QueryRow(ctx, `select count(*) from river.river_job where kind in ('webhook.deliver', 'event.fanout')
		and (attempt > 1 or coalesce(array_length(errors, 1), 0) > 0)`).Scan(&jobErrors); err != nil {
		t.Fatal(err)
	}
	if jobErrors != 0 {
		t.Errorf("%d fan-out or delivery jobs recorded an error", jobErrors)
	}

	l.rcv.mu.Lock()
	seen := map[string]bool{}
	for _, a := range l.rcv.got {
		seen[a.delivery] = true
		ok := false
		for _, secret := range l.secrets[a.path] {
			ok = ok || webhook.Verify(a.signature, a.body, secret, a.at) == nil
		}
		if !ok {
			t.Errorf("a delivery to %s carries no signature of its secrets", a.path)
		}
	}
	l.rcv.mu.Unlock()
	if len(seen) < total {
		t.Errorf("the receiver got %d deliveries, the database has %d", len(seen), total)
	}

	// Every sealed value opens under the new key alone.
	box, err := seal.New(onlyKey)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := in.s.dir.Pool().Query(ctx, "select kid, private_sealed from oauth_signing_keys")
	if err != nil {
		t.Fatal(err)
	}
	var keys int
	for rows.Next() {
		var kid string
		var sealed []byte
		if err := rows.Scan(&kid, &sealed); err != nil {
			t.Fatal(err)
		}
		keys++
		if _, err := box.Open(sealed, seal.Bind("oauth_signing_keys", "private_sealed", kid)); err != nil {
			t.Errorf("signing key %s: %v", kid, err)
		}
	}
	rows.Close()
	if keys < 2 {
		t.Errorf("%d signing keys; the test rotated once", keys)
	}
	var secrets int
	if err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select id, secret_sealed, previous_secret_sealed
			from webhook_subscriptions where workspace_id = $1`, ws).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var id uuid.UUID
				var cur, prev []byte
				if err := rows.Scan(&id, &cur, &prev); err != nil {
					return err
				}
				for col, v := range map[string][]byte{"secret_sealed": cur, "previous_secret_sealed": prev} {
					if v == nil {
						continue
					}
					secrets++
					if _, err := box.Open(v, seal.Bind("webhook_subscriptions", col, ws.String(), id.String())); err != nil {
						t.Errorf("subscription %s %s: %v", id, col, err)
					}
				}
			}
			return rows.Err()
		})
	}); err != nil {
		t.Fatal(err)
	}
	if secrets < 6 {
		t.Errorf("only %d sealed webhook secrets", secrets)
	}
}
