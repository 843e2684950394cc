package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	"github.com/pmapi/pmapi"
)

// blocked lists the address ranges a webhook may never reach: loopback, private
// (RFC 1918), link-local (with the cloud metadata address 169.254.169.254),
// CGNAT, "this network", benchmarking, reserved, multicast and broadcast, and
// their IPv6 counterparts (loopback, unspecified, ULA, link-local, multicast,
// documentation, discard). IPv4-mapped, NAT64 and 6to4 forms are unwrapped to
// the IPv4 address they carry and checked against the IPv4 list.
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "::1/128", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var (
	loopback4  = netip.MustParsePrefix("127.0.0.0/8")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries in its
// IPv4-mapped, NAT64 or 6to4 form.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), nat64Local.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// Blocked reports whether a may not be dialled. allowLoopback opens loopback
// (127.0.0.0/8 and ::1) and nothing else, for tests and local development.
func Blocked(a netip.Addr, allowLoopback bool) bool {
	if v4, ok := embeddedIPv4(a); ok {
		return Blocked(v4, allowLoopback)
	}
	if allowLoopback && (loopback4.Contains(a) || a == netip.IPv6Loopback()) {
		return false
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ErrBlocked is returned when a delivery would reach a blocked address.
var ErrBlocked = errors.New("destination address is not allowed (SSRF guard)")

// DialControl refuses, at connect time, any address Blocked refuses: a host
// that resolved to a public address when the subscription was created but to
// an internal one now (DNS rebinding) is stopped here.
func DialControl(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(host)
		if err != nil || Blocked(a.Unmap(), allowLoopback) {
			return fmt.Errorf("%w: %s", ErrBlocked, host)
		}
		return nil
	}
}

// Resolver looks up host names; tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL validates a subscription URL at creation: HTTPS only (400
// INVALID_WEBHOOK_URL), and no address it names or resolves to may be blocked
// (400 URL_NOT_ALLOWED).
func CheckURL(ctx context.Context, raw string, r Resolver, allowLoopback bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, pmapi.Errorf(pmapi.CodeInvalidWebhookURL, "url must be an absolute https:// URL without credentials").With("field", "url")
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return nil, pmapi.Errorf(pmapi.CodeInvalidWebhookURL, "url must use https").With("field", "url")
	}
	if len(raw) > 2048 {
		return nil, pmapi.Errorf(pmapi.CodeInvalidWebhookURL, "url must be at most 2048 characters").With("field", "url")
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
			addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		} else if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil || len(addrs) == 0 {
			return nil, pmapi.Errorf(pmapi.CodeURLNotAllowed, "url host %q does not resolve", host).With("field", "url")
		}
	}
	for _, a := range addrs {
		if Blocked(a.Unmap(), allowLoopback) {
			return nil, pmapi.Errorf(pmapi.CodeURLNotAllowed, "url resolves to an address webhooks may not reach (%s)", a).With("field", "url")
		}
	}
	return u, nil
}
