// Package webhook is the webhook resource: subscriptions, deliveries and their
// attempts (store.go), the request signature (this file) and the guard against
// server-side request forgery (ssrf.go).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature; the scheme is Stripe's, so a Stripe
// webhook verifier checks it unchanged.
const SignatureHeader = "X-Service-Signature"

// Tolerance is how far a signature's timestamp may be from now (spec: under 300 s).
const Tolerance = 300 * time.Second

func mac(secret string, t int64, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(strconv.FormatInt(t, 10)))
	h.Write([]byte("."))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Sign returns the header value `t=<unix>,v1=<hex>` with one v1 per secret: the
// current one, and during a rotation's grace period the previous one too.
func Sign(body []byte, at time.Time, secrets ...string) string {
	t := at.Unix()
	parts := []string{"t=" + strconv.FormatInt(t, 10)}
	for _, s := range secrets {
		parts = append(parts, "v1="+mac(s, t, body))
	}
	return strings.Join(parts, ",")
}

// Errors of Verify.
var (
	ErrMalformedSignature = errors.New("malformed signature header")
	ErrTimestamp          = errors.New("signature timestamp outside the tolerance")
	ErrNoMatch            = errors.New("no v1 signature matches")
)

// Verify is what a receiver does: parse t and every v1, refuse a timestamp 300 s
// or more away from now in either direction, and compare in constant time.
func Verify(header string, body []byte, secret string, now time.Time) error {
	var t int64 = -1
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformedSignature
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return ErrMalformedSignature
			}
			t = n
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if t < 0 || len(sigs) == 0 {
		return ErrMalformedSignature
	}
	if d := now.Sub(time.Unix(t, 0)); d >= Tolerance || d <= -Tolerance {
		return ErrTimestamp
	}
	want := []byte(mac(secret, t, body))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return ErrNoMatch
}
