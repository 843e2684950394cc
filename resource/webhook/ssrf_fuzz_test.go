package webhook

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// registryAllows is the guard's rule written from the hand-copied registries:
// an unzoned IPv4 address outside every IPv4 block and multicast, or an
// unzoned IPv6 address in global unicast outside every IPv6 block; plain
// loopback when the switch is on.
func registryAllows(a netip.Addr, loopback bool) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if loopback && (a.Is4() && a.As4()[0] == 127 || a == netip.IPv6Loopback()) {
		return true
	}
	blocks := ianaIPv6
	if a.Is4() {
		blocks = append([]string{"224.0.0.0/4"}, ianaIPv4...)
	} else if !netip.MustParsePrefix("2000::/3").Contains(a) {
		return false
	}
	for _, s := range blocks {
		if netip.MustParsePrefix(s).Contains(a) {
			return false
		}
	}
	return true
}

// FuzzAddressGuard: for any address (with any zone), Blocked, the dial-time
// hook and creation agree, and all three say what the registries say.
func FuzzAddressGuard(f *testing.F) {
	for _, s := range append(append([]string{"127.0.0.1", "::ffff:10.0.0.1"}, reported...), reachable...) {
		a := netip.MustParseAddr(s)
		f.Add(a.AsSlice(), a.Zone(), false)
		f.Add(a.AsSlice(), a.Zone(), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, zone string, loopback bool) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		if a.Is6() && zone != "" {
			a = a.WithZone(zone)
		}
		blocked := Blocked(a, loopback)
		if want := !registryAllows(a, loopback); blocked != want {
			t.Fatalf("Blocked(%s, %v) = %v, the registries say %v", a, loopback, blocked, want)
		}
		if refused := DialControl(loopback)("tcp", net.JoinHostPort(a.String(), "443"), nil) != nil; refused != blocked {
			t.Fatalf("dial hook refused %s: %v, Blocked: %v", a, refused, blocked)
		}
		u, err := CheckURL(context.Background(), "https://"+urlHost(a)+"/hook", fakeResolver{}, loopback)
		if err == nil && (blocked || a.Is4In6()) {
			t.Fatalf("creation accepted %s (%s)", a, u)
		}
	})
}

// inward resolves every name to a blocked address.
type inward struct{}

func (inward) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
}

// FuzzCheckURL: whatever the URL, a name never gets past creation when every
// name resolves inward, and an accepted address literal is one the dial-time
// hook lets through too.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/pmapi", "https://[::1%25lo]:28443/hook", "https://[fe80::1%25eth0]/",
		"https://[::127.0.0.1]/", "https://8.8.8.8/", "https://[2606:4700:4700::1111]:8443/x", "https://localhost./",
		"https://2130706433/", "https://0x7f.1/", "https://[::ffff:8.8.8.8]/", "HTTPS://8.8.8.8",
		"https://8.8.8.8%2f@10.0.0.1/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, loopback bool) {
		u, err := CheckURL(context.Background(), raw, inward{}, loopback)
		if err != nil {
			return
		}
		if !strings.EqualFold(u.Scheme, "https") || u.User != nil {
			t.Fatalf("accepted %q", raw)
		}
		a, perr := netip.ParseAddr(u.Hostname())
		if perr != nil {
			host := strings.ToLower(u.Hostname())
			if loopback && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
				return
			}
			t.Fatalf("accepted %q: its host %q is a name, and every name resolves inward", raw, u.Hostname())
		}
		if DialControl(loopback)("tcp", net.JoinHostPort(a.String(), "443"), nil) != nil {
			t.Fatalf("accepted %q, whose address the dial-time hook refuses", raw)
		}
	})
}
