package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/pmapi/pmapi"
)

// oldSecret is the shape secrets had before the Standard Webhooks one.
func oldSecret() string { return SecretPrefix + pmapi.RandomBase62(43) }

// TestNewSecretShape: a new secret is whsec_ + standard base64 of 32 bytes,
// which the Standard Webhooks reference library loads; an old one is not.
func TestNewSecretShape(t *testing.T) {
	s := NewSecret()
	raw, ok := strings.CutPrefix(s, SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(key) != 32 {
		t.Fatalf("secret %q...: %d bytes, %v", s[:10], len(key), err)
	}
	if k, ok := StandardKey(s); !ok || !bytes.Equal(k, key) {
		t.Errorf("StandardKey refuses a new secret")
	}
	if _, err := standardwebhooks.NewWebhook(s); err != nil {
		t.Errorf("the reference library refuses a new secret: %v", err)
	}
	if NewSecret() == s {
		t.Error("two secrets alike")
	}
	old := oldSecret()
	if _, ok := StandardKey(old); ok {
		t.Error("StandardKey accepts an old base62 secret")
	}
	if _, err := standardwebhooks.NewWebhook(old); err == nil {
		t.Error("the reference library loads an old secret; the headers could be sent for it")
	}
	// The spec bounds the key to 24-64 bytes.
	for n, want := range map[int]bool{16: false, 23: false, 24: true, 64: true, 65: false} {
		s := SecretPrefix + base64.StdEncoding.EncodeToString(make([]byte, n))
		if _, ok := StandardKey(s); ok != want {
			t.Errorf("a %d-byte key: accepted %v, want %v", n, ok, want)
		}
	}
	if _, ok := StandardKey(base64.StdEncoding.EncodeToString(make([]byte, 32))); ok {
		t.Error("a secret without whsec_ accepted")
	}
}

// TestDeliveryCarriesBothSchemes sends through the Sender to a local
// receiver: the Standard Webhooks reference library and stripe-go both verify
// what arrives, for each secret shape and during a rotation from an old
// secret; a tampered body fails both.
func TestDeliveryCarriesBothSchemes(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	var bodies [][]byte
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r.Header.Clone()), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	sender := senderTrusting(t, srv)
	deliver := func(secrets ...string) (http.Header, []byte) {
		t.Helper()
		mu.Lock()
		got, bodies = nil, nil
		mu.Unlock()
		body := []byte(`{"id":"evt_1","type":"webhook.test","data":{}}`)
		sig := SignDelivery("evt_1", body, time.Now(), secrets...)
		if r := sender.Send(context.Background(), srv.URL, "webhook.test", "evt_1", body, sig); !r.OK() {
			t.Fatalf("send: %+v", r)
		}
		mu.Lock()
		defer mu.Unlock()
		return got[0], bodies[0]
	}
	stripeOK := func(h http.Header, body []byte, secret string) error {
		return stripewebhook.ValidatePayloadWithTolerance(body, h.Get(SignatureHeader), secret, 300*time.Second)
	}
	standardOK := func(h http.Header, body []byte, secret string) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return err
		}
		return wh.Verify(body, h)
	}
	tampered := func(b []byte) []byte { return bytes.Replace(b, []byte("evt_1"), []byte("evt_2"), 1) }

	current, old := NewSecret(), oldSecret()
	h, body := deliver(current)
	if h.Get(StandardIDHeader) != "evt_1" || h.Get(StandardTimestampHeader) == "" ||
		!strings.HasPrefix(h.Get(StandardSignatureHeader), "v1,") {
		t.Fatalf("Standard headers %v", h)
	}
	if err := standardOK(h, body, current); err != nil {
		t.Errorf("the reference library refuses the delivery: %v", err)
	}
	if err := stripeOK(h, body, current); err != nil {
		t.Errorf("stripe-go refuses the delivery: %v", err)
	}
	if standardOK(h, tampered(body), current) == nil || stripeOK(h, tampered(body), current) == nil {
		t.Error("a tampered body verifies")
	}
	if standardOK(h, body, NewSecret()) == nil {
		t.Error("another secret verifies")
	}

	// An old secret alone: the Stripe-style header exactly as before, and no
	// Standard headers, since no reference library could load the secret.
	at := time.Now()
	h, body = deliver(old)
	if v := h.Get(SignatureHeader); v != Sign(body, time.Unix(timeOf(t, v), 0), old) {
		t.Errorf("the Stripe-style header changed: %q", v)
	}
	for _, k := range []string{StandardIDHeader, StandardTimestampHeader, StandardSignatureHeader} {
		if h.Get(k) != "" {
			t.Errorf("%s sent for an old secret", k)
		}
	}
	if err := stripeOK(h, body, old); err != nil || Verify(h.Get(SignatureHeader), body, old, at) != nil {
		t.Errorf("an old secret no longer verifies Stripe-style: %v", err)
	}

	// A rotation from the old secret: both still sign Stripe-style, the new
	// one alone the Standard way.
	h, body = deliver(current, old)
	if strings.Count(h.Get(SignatureHeader), "v1=") != 2 || strings.Count(h.Get(StandardSignatureHeader), "v1,") != 1 {
		t.Errorf("signatures during the grace: %q, %q", h.Get(SignatureHeader), h.Get(StandardSignatureHeader))
	}
	for _, s := range []string{current, old} {
		if err := stripeOK(h, body, s); err != nil {
			t.Errorf("stripe-go with the %s secret: %v", s[:10], err)
		}
	}
	if err := standardOK(h, body, current); err != nil {
		t.Errorf("the reference library during the grace: %v", err)
	}
	// Two new-shape secrets: both Standard signatures, space-separated.
	next := NewSecret()
	h, body = deliver(next, current)
	for _, s := range []string{next, current} {
		if err := standardOK(h, body, s); err != nil {
			t.Errorf("the reference library with either new secret: %v", err)
		}
	}
}

// TestSignDeliveryMatchesTheSpec pins the signed content, computed apart from
// the reference library: "{id}.{timestamp}.{body}" keyed by the decoded secret.
func TestSignDeliveryMatchesTheSpec(t *testing.T) {
	secret := SecretPrefix + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	at, body := time.Unix(1_800_000_000, 0), []byte(`{"a":1}`)
	sig := SignDelivery("evt_9", body, at, secret)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := wh.Sign("evt_9", at, body)
	if sig.Standard != want || sig.StandardTimestamp != "1800000000" || sig.Stripe != Sign(body, at, secret) {
		t.Errorf("got %+v, want Standard %q", sig, want)
	}
}

func timeOf(t *testing.T, header string) int64 {
	t.Helper()
	v, _, _ := strings.Cut(strings.TrimPrefix(header, "t="), ",")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("header %q: %v", header, err)
	}
	return n
}
