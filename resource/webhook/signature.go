// Package webhook is the webhook resource: subscriptions, deliveries and their
// attempts (store.go), the request signature (this file) and the guard against
// server-side request forgery (ssrf.go).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// The Standard Webhooks headers (standardwebhooks.com), sent beside
// SignatureHeader so that scheme's reference libraries verify a delivery too.
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// Signature is what one delivery carries: the Stripe-style header, and the
// Standard Webhooks timestamp and signature, empty when no secret has the key
// shape that scheme requires.
type Signature struct {
	Stripe            string
	StandardTimestamp string
	Standard          string
}

// SignDelivery signs body for delivery id with both schemes at one time.
func SignDelivery(id string, body []byte, at time.Time, secrets ...string) Signature {
	sig := Signature{Stripe: Sign(body, at, secrets...)}
	t := strconv.FormatInt(at.Unix(), 10)
	var std []string
	for _, s := range secrets {
		if key, ok := StandardKey(s); ok {
			h := hmac.New(sha256.New, key)
			h.Write([]byte(id + "." + t + "."))
			h.Write(body)
			std = append(std, "v1,"+base64.StdEncoding.EncodeToString(h.Sum(nil)))
		}
	}
	// A secret from before the Standard shape (whsec_ + base62) cannot be
	// loaded by that scheme's libraries, so no header is sent rather than one
	// they would reject; rotating the secret turns the headers on.
	if len(std) > 0 {
		sig.StandardTimestamp, sig.Standard = t, strings.Join(std, " ")
	}
	return sig
}

// StandardKey is the HMAC key the Standard Webhooks scheme derives from a
// secret: the standard base64 after whsec_, which the spec bounds to 24-64 bytes.
func StandardKey(secret string) ([]byte, bool) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, false
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, false
	}
	return key, true
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
