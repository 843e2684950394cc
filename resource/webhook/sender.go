package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// UserAgent is the fixed User-Agent of deliveries (spec: version 1.0).
const UserAgent = "pmapi-webhooks/1.0"

// Timeout bounds one attempt; a slower endpoint has failed.
const Timeout = 10 * time.Second

// Sender posts deliveries: through the SSRF guard at dial time, never following
// redirects, trusting the system roots plus an operator's CA file, with
// certificate checks always on.
type Sender struct {
	client       *http.Client
	loopbackHTTP bool
}

// AllowLoopbackHTTP lets deliveries go over plain http:// to a loopback
// receiver (pmapi dev, loopback.go); call it before the first Send.
func (s *Sender) AllowLoopbackHTTP() { s.loopbackHTTP = true }

// NewSender builds the delivery client. allowLoopback opens loopback only (tests
// and local development); caFile, when set, adds PEM CA certificates.
func NewSender(allowLoopback bool, caFile string) (*Sender, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("PMAPI_WEBHOOK_CA_FILE: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("PMAPI_WEBHOOK_CA_FILE %s holds no PEM certificate", caFile)
		}
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: DialControl(allowLoopback)}
	transport := &http.Transport{
		// No proxy from the environment: a proxy would dial for us, past the guard.
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 5 * time.Second,
		// Keep a connection per worker that may send to one endpoint at once:
		// a connection closed for want of room is a TLS handshake next time,
		// which costs both sides more CPU than the delivery.
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     60 * time.Second,
	}
	return &Sender{client: &http.Client{
		Transport: transport,
		Timeout:   Timeout,
		// Redirects are not followed: a 3xx is the endpoint's answer, a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Result is the outcome of one attempt.
type Result struct {
	Status  int
	Latency time.Duration
	Snippet string
	Err     error
	Blocked bool
}

// OK reports a 2xx answer.
func (r Result) OK() bool { return r.Err == nil && r.Status >= 200 && r.Status < 300 }

// Send posts body to url with the delivery headers.
func (s *Sender) Send(ctx context.Context, url, eventType, deliveryID string, body []byte, signature Signature) Result {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}
	}
	if req.URL.Scheme != "https" && !(s.loopbackHTTP && plainLoopback(req.URL)) {
		return Result{Err: ErrPlainHTTP, Blocked: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("X-Service-Event", eventType)
	req.Header.Set("X-Service-Delivery-Id", deliveryID)
	req.Header.Set(SignatureHeader, signature.Stripe)
	if signature.Standard != "" {
		// Set directly: Header.Set would canonicalize to Webhook-Id, and the
		// spec spells them in lower case (HTTP/1.1 names are case-blind anyway).
		req.Header[StandardIDHeader] = []string{deliveryID}
		req.Header[StandardTimestampHeader] = []string{signature.StandardTimestamp}
		req.Header[StandardSignatureHeader] = []string{signature.Standard}
	}
	resp, err := s.client.Do(req)
	r := Result{Latency: time.Since(start)}
	if err != nil {
		r.Err = err
		r.Blocked = errors.Is(err, ErrBlocked)
		return r
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	r.Status, r.Snippet = resp.StatusCode, string(snippet)
	if !r.OK() {
		r.Err = fmt.Errorf("endpoint answered %d", resp.StatusCode)
	}
	return r
}
