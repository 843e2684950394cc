package pmapisdk_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pmapi/pmapi/resource/webhook"
	pmapisdk "github.com/pmapi/pmapi/sdk"
)

// TestVerifyTheServersSignatures checks deliveries signed by the server's own
// signer (resource/webhook.Sign): one secret, a rotation's two, the
// tolerance, and what must fail.
func TestVerifyTheServersSignatures(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","type":"task.created","data":{}}`)
	now := time.Now().Truncate(time.Second) // signatures carry whole seconds
	header := func(at time.Time, secrets ...string) http.Header {
		h := http.Header{}
		h.Set(pmapisdk.SignatureHeader, webhook.Sign(body, at, secrets...))
		return h
	}
	const current, previous, other = "whsec_current", "whsec_previous", "whsec_other"
	for _, c := range []verifyCase{
		{"one secret", header(now, current), body, []string{current}, nil},
		{"rotation: signed with both, receiver has the new", header(now, current, previous), body, []string{current}, nil},
		{
			"rotation: signed with both, receiver still has the old",
			header(now, current, previous), body, []string{previous}, nil,
		},
		{
			"rotation: receiver has both, signed with the new only",
			header(now, current), body, []string{previous, current}, nil,
		},
		{"another secret", header(now, current), body, []string{other}, pmapisdk.ErrNoMatch},
		{"body changed", header(now, current), append([]byte(" "), body...), []string{current}, pmapisdk.ErrNoMatch},
		{"within the tolerance", header(now.Add(-299*time.Second), current), body, []string{current}, nil},
		{"300 s old", header(now.Add(-300*time.Second), current), body, []string{current}, pmapisdk.ErrTooOld},
		{"300 s ahead", header(now.Add(300*time.Second), current), body, []string{current}, pmapisdk.ErrTooOld},
		{"no header", http.Header{}, body, []string{current}, pmapisdk.ErrNoSignature},
	} {
		v := pmapisdk.Verifier{Now: func() time.Time { return now }}
		if err := v.Verify(c.body, c.header, c.secrets...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := pmapisdk.Verify(body, header(time.Now(), current), current); err != nil {
		t.Errorf("Verify with the clock: %v", err)
	}
	tight := pmapisdk.Verifier{Tolerance: 10 * time.Second, Now: func() time.Time { return now }}
	if err := tight.Verify(body, header(now.Add(-11*time.Second), current), current); !errors.Is(err, pmapisdk.ErrTooOld) {
		t.Errorf("a 10 s tolerance took an 11 s old signature: %v", err)
	}
}

// TestVerifyStandardTheServersSignatures checks the Standard Webhooks headers
// the server's signer makes, and that the SDK agrees with the scheme's
// reference library on the same delivery.
func TestVerifyStandardTheServersSignatures(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","type":"task.created","data":{}}`)
	now := time.Now()
	header := func(at time.Time, secrets ...string) http.Header {
		sig := webhook.SignDelivery("evt_1", body, at, secrets...)
		h := http.Header{}
		h.Set(pmapisdk.SignatureHeader, sig.Stripe)
		if sig.Standard != "" {
			h.Set(pmapisdk.StandardIDHeader, "evt_1")
			h.Set(pmapisdk.StandardTimestampHeader, sig.StandardTimestamp)
			h.Set(pmapisdk.StandardSignatureHeader, sig.Standard)
		}
		return h
	}
	current, previous, old := webhook.NewSecret(), webhook.NewSecret(), "whsec_"+strings.Repeat("A1b", 14)+"z"
	tampered := []byte(`{"id":"evt_1","type":"task.deleted","data":{}}`)
	for _, c := range []verifyCase{
		{"one secret", header(now, current), body, []string{current}, nil},
		{"rotation: receiver has the old", header(now, current, previous), body, []string{previous}, nil},
		{"rotation from an old-shape secret", header(now, current, old), body, []string{current}, nil},
		{"tampered body", header(now, current), tampered, []string{current}, pmapisdk.ErrNoMatch},
		{"other secret", header(now, current), body, []string{previous}, pmapisdk.ErrNoMatch},
		{"too old", header(now.Add(-301*time.Second), current), body, []string{current}, pmapisdk.ErrTooOld},
		{"old-shape secret: no headers", header(now, old), body, []string{old}, pmapisdk.ErrNoStandardSignature},
		{"old-shape secret given", header(now, current), body, []string{old}, pmapisdk.ErrSecretShape},
	} {
		if err := pmapisdk.VerifyStandard(c.body, c.header, c.secrets...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		wh, err := standardwebhooks.NewWebhook(c.secrets[0])
		if err != nil {
			continue // the reference library cannot load an old-shape secret either
		}
		if err := wh.Verify(c.body, c.header); (err == nil) != (c.want == nil) {
			t.Errorf("%s: the reference library says %v, the SDK %v", c.name, err, c.want)
		}
	}
	// The Stripe-style check is untouched by the Standard headers.
	if err := pmapisdk.Verify(body, header(now, current, old), old); err != nil {
		t.Errorf("Stripe-style with the old secret: %v", err)
	}
}

// verifyCase is a delivery a verifier checks: its headers, its body, the
// receiver's secrets and the error the check should answer.
type verifyCase struct {
	name    string
	header  http.Header
	body    []byte
	secrets []string
	want    error
}
