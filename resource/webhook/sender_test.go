package webhook

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSenderOutcomes covers one attempt's rules against a loopback HTTPS
// endpoint: the 10 s attempt timeout (shrunk here) is a failure, a TLS error is
// a failure (the certificate is checked; nothing switches that off), a 3xx is a
// failure and is not followed, and only the first KiB of the body is kept.
func TestSenderOutcomes(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(500 * time.Millisecond)
		case "/redirect":
			http.Redirect(w, r, "/big", http.StatusFound)
			return
		case "/created":
			w.WriteHeader(http.StatusCreated)
			return
		case "/accepted":
			w.WriteHeader(http.StatusAccepted)
			return
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 3000)))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s := senderTrusting(t, srv)
	if s.client.Timeout != 10*time.Second {
		t.Errorf("attempt timeout %v, want 10s", s.client.Timeout)
	}
	ctx := context.Background()
	send := func(s *Sender, path string) Result {
		return s.Send(ctx, srv.URL+path, "webhook.test", "evt_1", []byte(`{}`), Signature{Stripe: "t=1,v1=00"})
	}
	if r := send(s, "/ok"); !r.OK() || r.Status != 204 {
		t.Fatalf("ok: %+v", r)
	}
	for _, path := range []string{"/created", "/accepted"} {
		if r := send(s, path); !r.OK() {
			t.Errorf("%s is a 2xx, a success: %+v", path, r)
		}
	}
	if r := send(s, "/big"); !r.OK() || len(r.Snippet) != 1024 {
		t.Errorf("snippet of %d bytes, want 1024", len(r.Snippet))
	}
	if r := send(s, "/redirect"); r.OK() || r.Status != http.StatusFound || r.Err == nil {
		t.Errorf("redirect: %+v", r)
	}
	s.client.Timeout = 100 * time.Millisecond
	if r := send(s, "/slow"); r.OK() || r.Err == nil || r.Status != 0 {
		t.Errorf("timeout: %+v", r)
	}
	untrusting, err := NewSender(true, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := send(untrusting, "/ok"); r.OK() || r.Err == nil || !strings.Contains(r.Err.Error(), "certificate") {
		t.Errorf("TLS: %+v", r)
	}
}

// senderTrusting is a Sender that allows loopback addresses and trusts srv's
// certificate, as pmapi dev's sender trusts a local receiver.
func senderTrusting(t *testing.T, srv *httptest.Server) *Sender {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := NewSender(true, caFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
