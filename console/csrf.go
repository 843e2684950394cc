package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Every state-changing request carries a token bound to what the browser
// holds (the session, or a sign-in under way): HMAC-SHA256 under the
// console's key, which a page of another origin can neither read nor make.
// A request that names another Origin is refused before that.

func (cn *Console) csrfToken(bound string) string {
	m := hmac.New(sha256.New, cn.cfg.Key)
	m.Write([]byte("pmapi console csrf\x00" + bound))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfValid checks the form's token against bound, and the Origin header
// when the browser sent one.
func (cn *Console) csrfValid(c *fiber.Ctx, bound string) bool {
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || !strings.EqualFold(u.Host, string(c.Context().Host())) {
			return false
		}
	}
	given := c.FormValue("csrf")
	return bound != "" && given != "" && hmac.Equal([]byte(given), []byte(cn.csrfToken(bound)))
}

// withCSRF refuses a signed-in form without its session's token.
func (cn *Console) withCSRF(next func(*fiber.Ctx, *session) error) func(*fiber.Ctx, *session) error {
	return func(c *fiber.Ctx, s *session) error {
		if !cn.csrfValid(c, s.sid) {
			return cn.render(c, http.StatusForbidden, "message", view{S: s, Title: "Form expired",
				Message: "This form has expired or did not come from this console. Open the page again and retry.",
				Back:    Prefix + "/apps"})
		}
		return next(c, s)
	}
}
