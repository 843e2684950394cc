package webhook

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/pmapi/pmapi"
)

func TestBlockedAddresses(t *testing.T) {
	blockedCases := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "169.254.0.1",
		"100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "198.18.0.1", "198.19.255.255", "240.0.0.1", "255.255.255.255",
		"224.0.0.1", "239.255.255.255", "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "64:ff9b::7f00:1",
		"2002:7f00:1::1", "2002:a9fe:a9fe::1", "2001:db8::1",
	}
	for _, s := range blockedCases {
		if !Blocked(netip.MustParseAddr(s), false) {
			t.Errorf("%s is not blocked", s)
		}
	}
	for _, s := range []string{
		"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "172.32.0.1", "100.128.0.1",
	} {
		if Blocked(netip.MustParseAddr(s), false) {
			t.Errorf("%s is blocked", s)
		}
	}
	// NAT64 and 6to4 forms are refused whatever IPv4 address they carry:
	// 64:ff9b::/96 is outside global unicast, 2002::/16 a special range in it.
	for _, s := range []string{"64:ff9b::808:808", "2002:808:808::1"} {
		if !Blocked(netip.MustParseAddr(s), false) {
			t.Errorf("%s is not blocked", s)
		}
	}
	// The loopback switch opens loopback, nothing else.
	for _, s := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1"} {
		if Blocked(netip.MustParseAddr(s), true) {
			t.Errorf("%s blocked with loopback allowed", s)
		}
	}
	for _, s := range []string{"10.0.0.1", "169.254.169.254", "192.168.0.1", "fc00::1"} {
		if !Blocked(netip.MustParseAddr(s), true) {
			t.Errorf("%s opened by the loopback switch", s)
		}
	}
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return f[host], nil
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{
		"public.example":   {netip.MustParseAddr("93.184.216.34")},
		"rebind.example":   {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
	}
	ctx := context.Background()
	if _, err := CheckURL(ctx, "https://public.example/hook", r, false); err != nil {
		t.Errorf("public: %v", err)
	}
	cases := map[string]pmapi.Code{
		"http://public.example/hook":        pmapi.CodeInvalidWebhookURL,
		"ftp://public.example":              pmapi.CodeInvalidWebhookURL,
		"not a url":                         pmapi.CodeInvalidWebhookURL,
		"https://user:pw@public.example/":   pmapi.CodeInvalidWebhookURL,
		"https://10.1.2.3/hook":             pmapi.CodeURLNotAllowed,
		"https://192.168.0.10/hook":         pmapi.CodeURLNotAllowed,
		"https://127.0.0.1:8443/hook":       pmapi.CodeURLNotAllowed,
		"https://[::1]/hook":                pmapi.CodeURLNotAllowed,
		"https://[::ffff:127.0.0.1]/hook":   pmapi.CodeURLNotAllowed,
		"https://localhost/hook":            pmapi.CodeURLNotAllowed,
		"https://rebind.example/hook":       pmapi.CodeURLNotAllowed,
		"https://metadata.example/latest/":  pmapi.CodeURLNotAllowed,
		"https://unresolvable.example/hook": pmapi.CodeURLNotAllowed,
	}
	for raw, want := range cases {
		if _, err := CheckURL(ctx, raw, r, false); pmapi.ErrorCode(err) != want {
			t.Errorf("%s: %v, want %s", raw, err, want)
		}
	}
	if _, err := CheckURL(ctx, "https://127.0.0.1:8443/hook", r, true); err != nil {
		t.Errorf("loopback with the switch on: %v", err)
	}
}

func TestDialControlRefusesBlockedAddresses(t *testing.T) {
	ctl := DialControl(false)
	if err := ctl("tcp", "10.0.0.1:443", nil); err == nil {
		t.Error("dial to 10.0.0.1 allowed")
	}
	if err := ctl("tcp", "[::ffff:169.254.169.254]:443", nil); err == nil {
		t.Error("dial to mapped metadata address allowed")
	}
	if err := ctl("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("public dial refused: %v", err)
	}
}

func TestSignAndVerify(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	now := time.Unix(1_800_000_000, 0)
	h := Sign(body, now, "whsec_new", "whsec_old")
	for _, secret := range []string{"whsec_new", "whsec_old"} {
		if err := Verify(h, body, secret, now); err != nil {
			t.Errorf("%s: %v", secret, err)
		}
	}
	if err := Verify(h, body, "whsec_other", now); err != ErrNoMatch {
		t.Errorf("other secret: %v", err)
	}
	if err := Verify(h, []byte(`{"id":"evt_2"}`), "whsec_new", now); err != ErrNoMatch {
		t.Errorf("tampered body: %v", err)
	}
	for _, skew := range []time.Duration{300 * time.Second, -300 * time.Second, time.Hour} {
		if err := Verify(h, body, "whsec_new", now.Add(skew)); err != ErrTimestamp {
			t.Errorf("skew %v: %v", skew, err)
		}
	}
	if err := Verify(h, body, "whsec_new", now.Add(299*time.Second)); err != nil {
		t.Errorf("skew 299s: %v", err)
	}
	for _, bad := range []string{"", "t=abc,v1=00", "v1=00", "t=1", "garbage"} {
		if err := Verify(bad, body, "whsec_new", now); err != ErrMalformedSignature {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
