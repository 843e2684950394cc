package apitest

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// Receiver is an HTTPS endpoint on loopback that records what arrives and
// answers with the statuses it is told, in order (the last one repeats; 200
// when none are), and a redirect to the metadata address with any 3xx.
type Receiver struct {
	// URL is where it listens (https://127.0.0.1:port).
	URL string
	// CAFile holds its certificate in PEM, for a sender that trusts it as an
	// operator trusts a private PKI: certificate checks stay on.
	CAFile   string
	mu       sync.Mutex
	got      []Received
	statuses []int
	answer   []byte
}

// Received is one request a Receiver took.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// NewReceiver starts a Receiver that answers statuses, stopped when the test
// ends.
func NewReceiver(t testing.TB, statuses ...int) *Receiver {
	t.Helper()
	r := &Receiver{statuses: statuses}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, Received{req.Header.Clone(), body, time.Now()})
		status := 200
		if n := len(r.got); len(r.statuses) > 0 {
			status = r.statuses[min(n, len(r.statuses))-1]
		}
		answer := r.answer
		r.mu.Unlock()
		if answer == nil {
			answer = []byte(`{"ok":true}`)
		}
		if status >= 300 && status < 400 {
			w.Header().Set("Location", "https://169.254.169.254/latest/meta-data/")
		}
		w.WriteHeader(status)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	r.CAFile = t.TempDir() + "/ca.pem"
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(r.CAFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// Requests returns what arrived so far, oldest first.
func (r *Receiver) Requests() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}

// Times is when each request arrived.
func (r *Receiver) Times() []time.Time {
	var out []time.Time
	for _, got := range r.Requests() {
		out = append(out, got.At)
	}
	return out
}

// SetStatuses forgets what arrived and answers s from now on, as
// NewReceiver's statuses.
func (r *Receiver) SetStatuses(s ...int) {
	r.mu.Lock()
	r.statuses, r.got = s, nil
	r.mu.Unlock()
}

// SetAnswer makes body the body of every answer from now on ({"ok":true}
// when nil).
func (r *Receiver) SetAnswer(body []byte) {
	r.mu.Lock()
	r.answer = body
	r.mu.Unlock()
}

// Reaching is an app whose deliveries can reach rcv: webhook URLs on loopback
// are accepted and rcv's certificate is trusted; the sender itself dials
// loopback only when senderLoopback (the SSRF guard's test says no).
func Reaching(t testing.TB, rcv *Receiver, senderLoopback bool, mutate ...func(*Config)) *Env {
	t.Helper()
	sender, err := webhook.NewSender(senderLoopback, rcv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	return New(t, append([]func(*Config){func(d *Config) {
		d.WebhookAllowLoopback, d.WebhookSender = true, sender
	}}, mutate...)...)
}

// ReachingLoopbackHTTP is an app whose deliveries can reach a plain http://
// endpoint on loopback (an httptest server), as pmapi dev's can: such URLs are
// accepted and the sender dials them.
func ReachingLoopbackHTTP(t testing.TB, mutate ...func(*Config)) *Env {
	t.Helper()
	sender, err := webhook.NewSender(true, "")
	if err != nil {
		t.Fatal(err)
	}
	sender.AllowLoopbackHTTP()
	return New(t, append([]func(*Config){func(d *Config) {
		d.WebhookAllowLoopback, d.WebhookLoopbackHTTP, d.WebhookSender = true, true, sender
	}}, mutate...)...)
}

// WebhookEnv is an app Reaching rcv with workers running on a shrunken retry
// schedule (five retries 10 ms apart, a breaker cooling down for 10 ms), and a
// tenant of it.
func WebhookEnv(t testing.TB, rcv *Receiver, senderLoopback bool) (*Env, *Tenant) {
	t.Helper()
	env := Reaching(t, rcv, senderLoopback)
	env.StartWorkers(t, func(o *jobs.Options) {
		step := 10 * time.Millisecond
		o.Schedule = []time.Duration{step, step, step, step, step}
		o.Breaker = webhook.Breaker{Failures: 5, Cooldown: step, MaxCooldown: step}
		o.PollInterval = 50 * time.Millisecond
	})
	return env, env.NewTenant(t)
}

// Subscribe subscribes the tenant's app to events at url through the console
// and returns the subscription's id and secret; anything but 201 fails t.
func (tn *Tenant) Subscribe(t testing.TB, url string, events ...string) (id, secret string) {
	t.Helper()
	r := tn.Console(t, "POST", "/openapi/v1/apps/"+tn.ClientID+"/webhooks",
		map[string]any{"url": url, "events": events})
	if r.Status != 201 {
		t.Fatalf("subscribe: %d %s", r.Status, r.Raw)
	}
	return r.Str("id"), r.Str("secret")
}

// EmitterFor subscribes tn to events at rcv and returns its workspace, its
// shard, and insert-only job clients for tests that write events directly, as
// the server's changes do.
func EmitterFor(t testing.TB, env *Env, tn *Tenant, rcv *Receiver, events ...string) (uuid.UUID, *tenant.Shard,
	*jobs.Clients) {
	t.Helper()
	tn.Subscribe(t, rcv.URL, events...)
	emitter, err := jobs.NewClients(env.Directory, jobs.Options{Box: env.Box})
	if err != nil {
		t.Fatal(err)
	}
	return uuid.MustParse(tn.WorkspaceID), env.Directory.Shards().Default, emitter
}
