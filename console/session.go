package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
)

// The browser holds two cookies: sid, the session the API's session routes
// take (the same as the admin route issues), and the workspace's console
// client id, which the in-process calls send as X-Client-ID.
const (
	cookieSession = "sid"
	cookieClient  = "pmapi_console"
)

// session is the signed-in person as the API sees them.
type session struct {
	creds
	api.SessionView
	// CSRF is the token every form of the signed-in console carries.
	CSRF string
}

// signedIn runs page for a signed-in person, or sends the browser to sign in
// and come back.
func (cn *Console) signedIn(page func(*fiber.Ctx, *session) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		who := creds{sid: c.Cookies(cookieSession), clientID: c.Cookies(cookieClient)}
		s := &session{creds: who}
		if who.sid != "" && who.clientID != "" {
			err := cn.call(c, who, http.MethodGet, "/openapi/v1/session", nil, &s.SessionView)
			if err == nil {
				s.CSRF = cn.csrfToken(who.sid)
				return page(c, s)
			}
			if err.Status >= 500 {
				return cn.fail(c, err)
			}
		}
		back := c.OriginalURL()
		if c.Method() != http.MethodGet {
			back = Prefix + "/apps"
		}
		return c.Redirect(Prefix+"/login?"+url.Values{"return_to": {back}}.Encode(), http.StatusSeeOther)
	}
}

// setSession gives the browser a new session (sign-in).
func (cn *Console) setSession(c *fiber.Ctx, sid, clientID string, expires time.Time) {
	secure := !cn.cfg.Dev
	c.Cookie(&fiber.Cookie{Name: cookieSession, Value: sid, Path: "/", Expires: expires, HTTPOnly: true, Secure: secure,
		SameSite: fiber.CookieSameSiteLaxMode})
	c.Cookie(
		&fiber.Cookie{
			Name:     cookieClient,
			Value:    clientID,
			Path:     Prefix,
			Expires:  expires,
			HTTPOnly: true,
			Secure:   secure,
			SameSite: fiber.CookieSameSiteLaxMode,
		},
	)
}

// clearSession removes both cookies.
func (cn *Console) clearSession(c *fiber.Ctx) {
	secure := !cn.cfg.Dev
	past := time.Unix(0, 0)
	c.Cookie(&fiber.Cookie{Name: cookieSession, Value: "", Path: "/", Expires: past, HTTPOnly: true, Secure: secure,
		SameSite: fiber.CookieSameSiteLaxMode})
	c.Cookie(&fiber.Cookie{Name: cookieClient, Value: "", Path: Prefix, Expires: past, HTTPOnly: true, Secure: secure,
		SameSite: fiber.CookieSameSiteLaxMode})
}
