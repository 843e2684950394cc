package pmapisdk_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

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
	for _, c := range []struct {
		name    string
		header  http.Header
		body    []byte
		secrets []string
		want    error
	}{
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
