package webhook

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
)

// Plain http:// to a receiver on the developer's own machine is what pmapi dev
// allows so that webhooks can be tried without a certificate (docs/webhooks.md).
// Everywhere else a subscription and a delivery are HTTPS only. This file holds
// that one exception; the SSRF guard (ssrf.go) still checks every address.

// ErrPlainHTTP is a delivery to an http:// URL outside that exception (a row
// subscribed under pmapi dev and served by pmapi serve, say).
var ErrPlainHTTP = errors.New("plain http:// is only allowed to loopback receivers under pmapi dev")

// LoopbackHost reports whether host names this machine: localhost (and
// *.localhost, RFC 6761), 127.0.0.0/8 or ::1.
func LoopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// plainLoopback reports whether u is http:// to a loopback host.
func plainLoopback(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, "http") && LoopbackHost(u.Hostname())
}

// checkSubscriptionURL is CheckURL, except that with loopbackHTTP an http://
// URL to a loopback host passes the same checks its https:// form would.
func checkSubscriptionURL(
	ctx context.Context,
	raw string,
	r Resolver,
	allowLoopback, loopbackHTTP bool,
) (*url.URL, error) {
	if u, err := url.Parse(raw); err == nil && loopbackHTTP && plainLoopback(u) {
		secure := *u
		secure.Scheme = "https"
		checked, err := CheckURL(ctx, secure.String(), r, allowLoopback)
		if err != nil {
			return nil, err
		}
		checked.Scheme = "http"
		return checked, nil
	}
	return CheckURL(ctx, raw, r, allowLoopback)
}
