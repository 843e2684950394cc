package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi"
)

// The IANA special-purpose address registries, copied by hand from
// iana-ipv4-special-registry and iana-ipv6-special-registry (entries up to RFC
// 9780), so that the test checks the library's generated tables against the
// registries rather than against themselves.
var (
	ianaIPv4 = []string{
		"0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.9/32", "192.0.0.10/32",
		"192.0.0.170/32", "192.0.0.171/32", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24",
		"192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
	}
	ianaIPv6 = []string{
		"::1/128", "::/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64",
		"2001::/23", "2001::/32", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:2::/48",
		"2001:3::/32", "2001:4:112::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2001:db8::/32",
		"2002::/16", "2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10",
	}
	// reported are addresses an earlier guard accepted, zones included,
	// and the rest of IPv6 outside global unicast (IPv4-compatible forms,
	// unassigned space, site-local, multicast).
	reported = []string{
		"::1%lo", "fe80::1%eth0", "fd00::1%lo", "::127.0.0.1", "::7f00:1", "::a00:1",
		"2001::1", "2001:2::1", "2001:10::1", "2001:20::1", "3fff::1", "5f00::1", "4000::1", "6000::1",
		"2001:db8::1%1", "2606:4700:4700::1111%lo", "e000::1", "fec0::1", "ff02::1", "224.0.0.1", "169.254.169.254",
		"fd00:ec2::254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1",
	}
	// reachable must stay open, the neighbours of blocked ranges among them.
	reachable = []string{
		"1.1.1.1", "8.8.8.8", "11.0.0.1", "100.128.0.1", "172.32.0.1", "192.0.1.1", "198.20.0.1",
		"2001:200::1", "2003::1", "2606:4700:4700::1111", "2a00:1450:4001::1",
	}
)

// special returns every address the test must see refused: the first and last
// address of each registry block (and one inside), and the reported ones.
func special(t *testing.T) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	for _, s := range append(append([]string(nil), ianaIPv4...), ianaIPv6...) {
		p := netip.MustParsePrefix(s)
		first, last := p.Masked().Addr(), lastAddr(p)
		out = append(out, first, last)
		if inside := first.Next(); p.Contains(inside) && inside != last {
			out = append(out, inside)
		}
	}
	for _, s := range reported {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// urlHost writes a as a URL host: brackets for IPv6, the zone's % escaped.
func urlHost(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return "[" + strings.Replace(a.String(), "%", "%25", 1) + "]"
}

// TestSpecialAddressesAreRefusedEverywhere holds every registry block and every
// reported address to the guard at each place it runs: Blocked, creation (the
// address as the URL's host and as what a name resolves to), the dial-time
// hook, and a real dial through the Sender. The loopback switch opens none of
// them but plain loopback.
func TestSpecialAddressesAreRefusedEverywhere(t *testing.T) {
	ctx := context.Background()
	opened := map[netip.Addr]bool{}
	for _, s := range []string{"127.0.0.0", "127.0.0.1", "127.255.255.255", "::1"} {
		opened[netip.MustParseAddr(s)] = true
	}
	senders := map[bool]*Sender{}
	for _, loopback := range []bool{false, true} {
		s, err := NewSender(loopback, "")
		if err != nil {
			t.Fatal(err)
		}
		senders[loopback] = s
	}
	for _, a := range special(t) {
		for _, loopback := range []bool{false, true} {
			want := !(loopback && opened[a.Unmap()])
			if got := Blocked(a, loopback); got != want {
				t.Errorf("Blocked(%s, loopback=%v) = %v", a, loopback, got)
			}
			if !want {
				continue
			}
			raw := "https://" + urlHost(a) + ":28443/hook"
			if _, err := CheckURL(ctx, raw, fakeResolver{}, loopback); pmapi.ErrorCode(err) != pmapi.CodeURLNotAllowed {
				t.Errorf("creation, %s (loopback=%v): %v", raw, loopback, err)
			}
			r := fakeResolver{"inward.example": {a}}
			if _, err := CheckURL(ctx, "https://inward.example/hook", r, loopback); pmapi.ErrorCode(
				err,
			) != pmapi.CodeURLNotAllowed {
				t.Errorf("creation, a name resolving to %s (loopback=%v): %v", a, loopback, err)
			}
			if err := DialControl(loopback)("tcp", net.JoinHostPort(a.String(), "28443"), nil); !errors.Is(err, ErrBlocked) {
				t.Errorf("dial hook, %s (loopback=%v): %v", a, loopback, err)
			}
			// The hook runs before connect(2), so a refused dial sends nothing;
			// the deadline only bounds a dial the guard failed to stop.
			dialCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			res := senders[loopback].Send(dialCtx, raw, "webhook.test", "evt_1", []byte(`{}`), Signature{Stripe: "t=1,v1=00"})
			cancel()
			if !res.Blocked {
				t.Errorf("Sender to %s (loopback=%v): %+v", raw, loopback, res)
			}
		}
	}
	for _, s := range reachable {
		a := netip.MustParseAddr(s)
		if Blocked(a, false) || DialControl(false)("tcp", net.JoinHostPort(s, "443"), nil) != nil {
			t.Errorf("%s is refused", s)
		}
		r := fakeResolver{"outward.example": {a}}
		if _, err := CheckURL(ctx, "https://outward.example/hook", r, false); err != nil {
			t.Errorf("creation, a name resolving to %s: %v", s, err)
		}
	}
}

// TestMappedAddresses: a resolver's IPv4-mapped answer is the IPv4 address it
// carries, but a URL naming an IPv4-mapped literal is refused, public or not
// (::ffff:0:0/96 is a registry block).
func TestMappedAddresses(t *testing.T) {
	ctx := context.Background()
	r := fakeResolver{
		"public.example": {netip.MustParseAddr("::ffff:8.8.8.8")},
		"inward.example": {netip.MustParseAddr("::ffff:10.0.0.1")},
	}
	if _, err := CheckURL(ctx, "https://public.example/", r, false); err != nil {
		t.Errorf("a name resolving to ::ffff:8.8.8.8: %v", err)
	}
	if _, err := CheckURL(ctx, "https://inward.example/", r, false); pmapi.ErrorCode(err) != pmapi.CodeURLNotAllowed {
		t.Errorf("a name resolving to ::ffff:10.0.0.1: %v", err)
	}
	for _, raw := range []string{"https://[::ffff:8.8.8.8]/", "https://[::ffff:127.0.0.1]/"} {
		if _, err := CheckURL(ctx, raw, r, true); pmapi.ErrorCode(err) != pmapi.CodeURLNotAllowed {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
