package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// baseURL is the scheme and host of every absolute URL pmapi prints (the RFC
// 8414 metadata's endpoints, the device flow's verification_uri).
//
// Deps.PublicURL wins: it is what operators decided clients use, and no
// header can move it. Without it the URL is the request's own (pmapi dev), or
// what a trusted proxy forwarded. Fiber's c.BaseURL() is not used: it reads
// X-Forwarded-Host from whoever sends it, and takes the leftmost of a list,
// which a proxy that appends leaves under the client's control.
func (s *Server) baseURL(c *fiber.Ctx) string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	scheme, host := "http", string(c.Request().Host())
	if c.Context().IsTLS() {
		scheme = "https"
	}
	if len(s.TrustedProxies) > 0 && c.IsProxyTrusted() {
		fwdProto, fwdHost := forwarded(c.Get(fiber.HeaderForwarded))
		if fwdProto == "" {
			fwdProto = lastOfList(c.Get(fiber.HeaderXForwardedProto))
		}
		if fwdHost == "" {
			fwdHost = lastOfList(c.Get(fiber.HeaderXForwardedHost))
		}
		if p := strings.ToLower(fwdProto); p == "http" || p == "https" {
			scheme = p
		}
		if saneHost(fwdHost) {
			host = fwdHost
		}
	}
	if !saneHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// lastOfList is the rightmost element of a comma-separated header: the one
// the nearest proxy, the trusted one, added.
func lastOfList(v string) string {
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// forwarded reads proto and host from the last element of an RFC 7239
// Forwarded header, for the reason lastOfList gives.
func forwarded(v string) (proto, host string) {
	if v == "" {
		return "", ""
	}
	elements := splitOutsideQuotes(v, ',')
	for _, pair := range splitOutsideQuotes(elements[len(elements)-1], ';') {
		k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = strings.ReplaceAll(val[1:len(val)-1], `\`, "")
		}
		switch strings.ToLower(k) {
		case "proto":
			proto = val
		case "host":
			host = val
		}
	}
	return proto, host
}

func splitOutsideQuotes(v string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '"':
			quoted = !quoted
		case v[i] == sep && !quoted:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// saneHost admits a host name or address with an optional port, nothing that
// could carry a path, a query or markup into a printed URL.
func saneHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-:[]_", c) >= 0) {
			return false
		}
	}
	return true
}
