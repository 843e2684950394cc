package console

import (
	"net/url"
	"strings"
)

// returnTo is where sign-in sends the browser back: a console page of this
// origin, or the console's start when raw is anything else (another origin,
// a scheme, //host, backslashes, control characters, the sign-in pages
// themselves).
func returnTo(raw string) (string, bool) {
	const start = Prefix + "/apps"
	if raw == "" {
		return start, true
	}
	if strings.ContainsAny(raw, "\\\x00\r\n\t") || !strings.HasPrefix(raw, Prefix+"/") && raw != Prefix {
		return start, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(raw, "//") {
		return start, false
	}
	clean := u.EscapedPath()
	lower := strings.ToLower(clean)
	if strings.Contains(lower, "%2e") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") ||
		strings.Contains(clean, "/../") || strings.HasSuffix(clean, "/..") || strings.Contains(clean, "/./") {
		return start, false
	}
	for _, p := range []string{"/login", "/callback", "/pick", "/logout", "/dev/"} {
		if strings.HasPrefix(clean, Prefix+p) {
			return start, true
		}
	}
	if u.RawQuery != "" {
		clean += "?" + u.RawQuery
	}
	return clean, true
}
