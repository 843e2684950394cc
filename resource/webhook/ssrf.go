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

	"code.dny.dev/ssrf"

	"github.com/pmapi/pmapi"
)

// The address tables are code.dny.dev/ssrf's, which its maintainer's bot
// regenerates from IANA's IPv4 and IPv6 special-purpose registries twice a
// month: every IPv4 special-purpose block plus multicast, and for IPv6
// everything outside global unicast 2000::/3 and the special blocks inside it
// (Teredo, benchmarking, ORCHID, documentation, 6to4, ...). Only the address
// is checked: webhooks may use any port.
var (
	guard = ssrf.New(ssrf.WithAnyNetwork(), ssrf.WithAnyPort())
	// loopbackGuard opens IPv4 loopback and ::1 ahead of the tables and
	// nothing else: not the IPv4-compatible ::127.0.0.1, not NAT64 or 6to4
	// forms of 127/8, not a zoned ::1.
	loopbackGuard = ssrf.New(ssrf.WithAnyNetwork(), ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(netip.MustParsePrefix("127.0.0.0/8")),
		ssrf.WithAllowedV6Prefixes(netip.MustParsePrefix("::1/128")))
)

// Blocked reports whether a may not be dialled. allowLoopback opens loopback
// (127.0.0.0/8 and ::1) and nothing else, for tests and local development.
func Blocked(a netip.Addr, allowLoopback bool) bool {
	// netip.Prefix.Contains never matches an address with a zone, so a zoned
	// address would pass every table. A zone scopes an address to one
	// interface, which only non-global addresses need: refuse them all.
	if !a.IsValid() || a.Zone() != "" {
		return true
	}
	// An IPv4-mapped address is dialled as the IPv4 address it carries (Go
	// opens an AF_INET socket for it), and Go's resolver returns A records
	// in that form: check the IPv4 address.
	a = a.Unmap()
	g := guard
	if allowLoopback {
		g = loopbackGuard
	}
	return g.SafeAddr(a) != nil
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
		if err != nil || Blocked(a, allowLoopback) {
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
		return nil, pmapi.Errorf(pmapi.CodeInvalidWebhookURL, "url must be an absolute https:// URL without credentials").
			With("field", "url")
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
		// ::ffff:0:0/96 is in IANA's IPv6 special-purpose registry: a URL
		// names the IPv4 address itself. (Resolved A records arrive in that
		// form too, which is why Blocked unmaps rather than refuses it.)
		if a.Is4In6() {
			return nil, pmapi.Errorf(pmapi.CodeURLNotAllowed,
				"url names an IPv4-mapped IPv6 address (%s); name the IPv4 address", a).
				With("field", "url")
		}
		addrs = []netip.Addr{a}
	} else {
		if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
			addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		} else if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil || len(addrs) == 0 {
			return nil, pmapi.Errorf(pmapi.CodeURLNotAllowed, "url host %q does not resolve", host).With("field", "url")
		}
	}
	for _, a := range addrs {
		if Blocked(a, allowLoopback) {
			return nil, pmapi.Errorf(pmapi.CodeURLNotAllowed, "url resolves to an address webhooks may not reach (%s)", a).
				With("field", "url")
		}
	}
	return u, nil
}
