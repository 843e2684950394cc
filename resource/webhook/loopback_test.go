package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pmapi/pmapi"
)

// TestPlainHTTPOnlyToLoopbackUnderDev: with the dev switch, http:// passes for
// loopback hosts and nothing else; without it (serve, work, or dev with
// PMAPI_WEBHOOK_ALLOW_LOOPBACK=false) every http:// URL is refused as before.
func TestPlainHTTPOnlyToLoopbackUnderDev(t *testing.T) {
	ctx := context.Background()
	r := fakeResolver{}
	for _, raw := range []string{
		"http://localhost:4242/webhook", "http://127.0.0.1:4242/", "http://[::1]:4242/x", "http://hooks.localhost/",
		"HTTP://LOCALHOST/",
	} {
		u, err := checkSubscriptionURL(ctx, raw, r, true, true)
		if err != nil || u.Scheme != "http" {
			t.Errorf("dev, %s: %v, %v", raw, u, err)
		}
		if _, err := checkSubscriptionURL(ctx, raw, r, true, false); pmapi.ErrorCode(err) != pmapi.CodeInvalidWebhookURL {
			t.Errorf("without the dev switch, %s: %v, want INVALID_WEBHOOK_URL", raw, err)
		}
	}
	for raw, want := range map[string]pmapi.Code{
		"http://10.0.0.1/":               pmapi.CodeInvalidWebhookURL, // not loopback: https rule first
		"http://public.example/":         pmapi.CodeInvalidWebhookURL,
		"http://localhost.example.com/":  pmapi.CodeInvalidWebhookURL,
		"http://user:pw@localhost:4242/": pmapi.CodeInvalidWebhookURL, // CheckURL's rules still apply
	} {
		if _, err := checkSubscriptionURL(ctx, raw, r, true, true); pmapi.ErrorCode(err) != want {
			t.Errorf("dev, %s: %v, want %s", raw, err, want)
		}
	}
	// The switch never opens loopback by itself: the guard still decides.
	if _, err := checkSubscriptionURL(ctx, "http://127.0.0.1:4242/", r, false, true); pmapi.ErrorCode(
		err,
	) != pmapi.CodeURLNotAllowed {
		t.Errorf("loopback refused by the guard: %v, want URL_NOT_ALLOWED", err)
	}
}

// TestSenderPlainHTTP: a sender delivers over plain http only when pmapi dev
// allowed it, and only to loopback.
func TestSenderPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }),
	)
	defer srv.Close()
	send := func(s *Sender, url string) Result {
		return s.Send(context.Background(), url, "webhook.test", "evt_1", []byte(`{}`), Signature{Stripe: "t=1,v1=00"})
	}
	prod, err := NewSender(true, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := send(prod, srv.URL); !errors.Is(r.Err, ErrPlainHTTP) || !r.Blocked {
		t.Errorf("production sender over http: %+v", r)
	}
	dev, err := NewSender(true, "")
	if err != nil {
		t.Fatal(err)
	}
	dev.AllowLoopbackHTTP()
	if r := send(dev, srv.URL); !r.OK() {
		t.Errorf("dev sender to a loopback http receiver: %+v", r)
	}
	if r := send(dev, "http://93.184.216.34/"); !errors.Is(r.Err, ErrPlainHTTP) {
		t.Errorf("dev sender over http to a public address: %+v", r)
	}
}
