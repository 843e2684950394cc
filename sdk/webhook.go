package pmapisdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a delivery's signature: `t=<unix>,v1=<hex>`, one v1
// per secret the subscription signs with (two during a rotation's grace).
const SignatureHeader = "X-Service-Signature"

// DefaultTolerance is how far a signature's time may be from now: the
// spec's 300 seconds, exclusive.
const DefaultTolerance = 300 * time.Second

// The Standard Webhooks headers (standardwebhooks.com) a delivery carries
// beside SignatureHeader when its subscription's secret has that scheme's
// shape, whsec_ + base64; secrets from before it have to be rotated first.
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// Errors of Verify and VerifyStandard.
var (
	ErrNoSignature = errors.New("pmapisdk: no or malformed " + SignatureHeader + " header")
	ErrTooOld      = errors.New("pmapisdk: signature time outside the tolerance")
	ErrNoMatch     = errors.New("pmapisdk: no v1 signature matches a secret")
	// ErrNoStandardSignature: a webhook-* header is missing or malformed, as
	// on every delivery signed only with a secret of the old shape.
	ErrNoStandardSignature = errors.New("pmapisdk: no or malformed webhook-id, webhook-timestamp or " +
		"webhook-signature header")
	// ErrSecretShape: the secret is not whsec_ + base64, so the Standard
	// scheme cannot use it; rotate it.
	ErrSecretShape = errors.New("pmapisdk: the secret is not whsec_ + base64; rotate it for Standard Webhooks")
)

// Verifier checks webhook signatures. Its zero value uses DefaultTolerance
// and the clock.
type Verifier struct {
	Tolerance time.Duration
	Now       func() time.Time
}

// Verify checks a delivery with the zero Verifier: body is the raw request
// body, header the request's headers, secrets the subscription's signing
// secrets (`whsec_...`; during a rotation both the new and the old one).
func Verify(body []byte, header http.Header, secrets ...string) error {
	return Verifier{}.Verify(body, header, secrets...)
}

// Verify accepts the delivery when its time is within the tolerance and one
// of its v1 signatures is the HMAC-SHA256 of `<t>.<body>` under one of
// secrets, compared in constant time.
func (v Verifier) Verify(body []byte, header http.Header, secrets ...string) error {
	t, sigs, err := parseSignature(header.Get(SignatureHeader))
	if err != nil {
		return err
	}
	if !v.inTolerance(t) {
		return ErrTooOld
	}
	for _, secret := range secrets {
		if signedBy([]byte(secret), strconv.FormatInt(t, 10)+".", body, sigs) {
			return nil
		}
	}
	return ErrNoMatch
}

// signedBy says whether one of sigs is the HMAC-SHA256 of prefix and body
// under key, compared in constant time.
func signedBy(key []byte, prefix string, body []byte, sigs [][]byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(prefix))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return true
		}
	}
	return false
}

func (v Verifier) inTolerance(t int64) bool {
	tol, now := v.Tolerance, time.Now()
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if v.Now != nil {
		now = v.Now()
	}
	d := now.Sub(time.Unix(t, 0))
	return d < tol && d > -tol
}

// VerifyStandard checks a delivery with the zero Verifier by its Standard
// Webhooks headers instead of SignatureHeader.
func VerifyStandard(body []byte, header http.Header, secrets ...string) error {
	return Verifier{}.VerifyStandard(body, header, secrets...)
}

// VerifyStandard accepts the delivery when its webhook-timestamp is within
// the tolerance and one of the space-separated `v1,<base64>` signatures is the
// HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed by the base64
// after whsec_ of one of secrets, as the Standard Webhooks specification says.
func (v Verifier) VerifyStandard(body []byte, header http.Header, secrets ...string) error {
	id, ts, sig := header.Get(StandardIDHeader), header.Get(StandardTimestampHeader),
		header.Get(StandardSignatureHeader)
	t, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sig == "" || err != nil {
		return ErrNoStandardSignature
	}
	if !v.inTolerance(t) {
		return ErrTooOld
	}
	var sigs [][]byte
	for _, s := range strings.Fields(sig) {
		if val, ok := strings.CutPrefix(s, "v1,"); ok {
			if b, err := base64.StdEncoding.DecodeString(val); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	for _, secret := range secrets {
		raw, ok := strings.CutPrefix(secret, "whsec_")
		key, err := base64.StdEncoding.DecodeString(raw)
		if !ok || err != nil {
			return ErrSecretShape
		}
		if signedBy(key, id+"."+ts+".", body, sigs) {
			return nil
		}
	}
	return ErrNoMatch
}

// parseSignature reads t and every well-formed v1 of the header; other
// schemes' values are skipped, as Stripe's verifiers do.
func parseSignature(h string) (int64, [][]byte, error) {
	t := int64(-1)
	var sigs [][]byte
	for _, part := range strings.Split(h, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return 0, nil, ErrNoSignature
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return 0, nil, ErrNoSignature
			}
			t = n
		case "v1":
			if b, err := hex.DecodeString(val); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	if t < 0 || len(sigs) == 0 {
		return 0, nil, ErrNoSignature
	}
	return t, sigs, nil
}
