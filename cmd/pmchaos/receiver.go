package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v84/webhook"
)

// receiver is the subscribed HTTPS endpoint. Every delivery is checked with
// stripe-go's verifier, an implementation pmapi does not share, and counted by
// its delivery id (which stays the same through retries).
type receiver struct {
	srv    *httptest.Server
	secret atomic.Value // the whsec_ secret, set once subscribed

	mu       sync.Mutex
	got      map[string]int // delivery id -> requests carrying it
	requests int
	badSig   int
	last     time.Time
}

func newReceiver() *receiver {
	r := &receiver{got: map[string]int{}}
	r.secret.Store("")
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// A worker killed in the middle of a TLS handshake is the point of the
	// run, not news.
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.srv.StartTLS()
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	good := stripewebhook.ValidatePayloadWithTolerance(
		body,
		req.Header.Get("X-Service-Signature"),
		r.secret.Load().(string),
		300*time.Second,
	) == nil
	id := req.Header.Get("X-Service-Delivery-Id")
	r.mu.Lock()
	r.requests++
	r.last = time.Now()
	if good {
		r.got[id]++
	} else {
		r.badSig++
	}
	r.mu.Unlock()
	if !good {
		// A refused delivery is retried: a verifier that disagreed once
		// would show up as a delivery that never arrives.
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// has reports whether the delivery arrived with a valid signature.
func (r *receiver) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id] > 0
}

type receiverSummary struct {
	Distinct, Requests, BadSignatures int
	LastAt                            time.Time
}

func (r *receiver) summary() receiverSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return receiverSummary{Distinct: len(r.got), Requests: r.requests, BadSignatures: r.badSig, LastAt: r.last}
}
