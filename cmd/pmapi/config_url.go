package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// parsePublicURL reads PMAPI_PUBLIC_URL. It must be an origin (scheme and
// host, no path): pmapi prints its own paths after it, and RFC 8414 puts the
// metadata of an issuer without a path at /.well-known/oauth-authorization-server,
// which is where pmapi serves it.
func parsePublicURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	const want = "PMAPI_PUBLIC_URL must be the scheme and host clients reach the API under, " +
		"such as https://api.example.com"
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(raw), "/"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", want, err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https", u.Host == "", u.Hostname() == "":
		return "", fmt.Errorf("%s (got %q)", want, raw)
	case u.User != nil, u.Path != "", u.RawQuery != "", u.Fragment != "", u.ForceQuery:
		return "", fmt.Errorf("%s, without user, path, query or fragment (got %q)", want, raw)
	}
	return scheme + "://" + strings.ToLower(u.Host), nil
}

// parseTrustedProxies reads PMAPI_TRUSTED_PROXIES: addresses and CIDRs,
// comma-separated. Each comes back as a CIDR, so that a single address is
// matched by containment like a range, never by comparing spellings.
func parseTrustedProxies(raw string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p netip.Prefix
		var err error
		if strings.Contains(part, "/") {
			p, err = netip.ParsePrefix(part)
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(part); err == nil && a.Zone() == "" {
				p = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil || !p.IsValid() {
			return nil, fmt.Errorf(
				"PMAPI_TRUSTED_PROXIES: %q is not an IP address or CIDR (want e.g. 10.0.0.0/8,192.168.1.10)",
				part,
			)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		out = append(out, p.Masked().String())
	}
	return out, nil
}
