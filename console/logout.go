package console

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// Sign-out ends the session on the server (DELETE /openapi/v1/session, in
// process) and removes the cookies. The page asks first: a link alone cannot
// sign anyone out.

func (cn *Console) logoutPage(c *fiber.Ctx) error {
	sid := c.Cookies(cookieSession)
	if sid == "" {
		return cn.render(c, http.StatusOK, "message", view{Title: "Signed out", Message: "You are not signed in.",
			Back: Prefix + "/login"})
	}
	return cn.render(c, http.StatusOK, "logout", view{Title: "Sign out", CSRF: cn.csrfToken(sid)})
}

func (cn *Console) logout(c *fiber.Ctx) error {
	who := creds{sid: c.Cookies(cookieSession), clientID: c.Cookies(cookieClient)}
	if !cn.csrfValid(c, who.sid) {
		return cn.render(c, http.StatusForbidden, "message", view{Title: "Form expired",
			Message: "This form has expired or did not come from this console. Open the page again and retry.",
			Back:    Prefix + "/logout"})
	}
	if who.clientID != "" {
		if err := cn.call(c, who, http.MethodDelete, "/openapi/v1/session", nil, nil); err != nil && err.Status >= 500 {
			return cn.fail(c, err)
		}
	}
	cn.clearSession(c)
	return cn.render(c, http.StatusOK, "message", view{Title: "Signed out",
		Message: "You are signed out; the session has ended on the server.", Back: Prefix + "/login"})
}
