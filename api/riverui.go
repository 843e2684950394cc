package api

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/pmapi/pmapi"
)

// RiverUIPrefix is where River UI (the job dashboard) is mounted, one instance
// per shard at RiverUIPrefix + "/" + shard. It is not part of the public API
// document: it is an operator tool, a single-page app with its own API.
const RiverUIPrefix = "/admin/river"

// mountRiverUI serves each shard's River UI behind the operator token. Browsers
// cannot send a bearer token to a page, so HTTP Basic with the token as the
// password is accepted too, and a missing credential gets the Basic challenge.
func (s *Server) mountRiverUI(app *fiber.App) {
	if len(s.RiverUI) == 0 {
		return
	}
	app.Get(RiverUIPrefix, func(c *fiber.Ctx) error {
		return c.Redirect(RiverUIPrefix+"/default/", http.StatusFound)
	})
	for shard, h := range s.RiverUI {
		handler := adaptor.HTTPHandler(h)
		app.All(RiverUIPrefix+"/"+shard+"/*", s.requireOperatorForUI, handler)
		app.All(RiverUIPrefix+"/"+shard, s.requireOperatorForUI, handler)
	}
}

func (s *Server) requireOperatorForUI(c *fiber.Ctx) error {
	if s.AdminToken == "" {
		return pmapi.Errorf(pmapi.CodeNotFound, "no such route")
	}
	auth := c.Get(fiber.HeaderAuthorization)
	if raw, ok := strings.CutPrefix(auth, "Basic "); ok {
		if dec, err := base64.StdEncoding.DecodeString(raw); err == nil {
			if _, password, ok := strings.Cut(string(dec), ":"); ok {
				c.Request().Header.Set(fiber.HeaderAuthorization, "Bearer "+password)
			}
		}
	}
	if c.Get(fiber.HeaderAuthorization) == "" {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="pmapi operator", charset="UTF-8"`)
	}
	return s.requireAdmin(c)
}
