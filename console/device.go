package console

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
)

// The OAuth device approval page (RFC 8628): the verification URI sends the
// browser here with the code. The signed-in session sees which app asks, in
// which workspace and for which scopes before deciding; nobody pastes a
// session id.

func (cn *Console) devicePage(c *fiber.Ctx, s *session) error {
	code := c.Query("user_code")
	v := view{S: s, Title: "Connect a device", Nav: "device"}
	if code == "" {
		return cn.render(c, http.StatusOK, "device", v)
	}
	var p api.DevicePending
	path := "/openapi/v1/oauth/device/pending?" + url.Values{"user_code": {code}}.Encode()
	if err := cn.call(c, s.creds, http.MethodGet, path, nil, &p); err != nil {
		return cn.refused(c, err, func(st int, e view) error {
			v.Error, v.Data = e.Error+" If the device belongs to another workspace, sign in to that one.", nil
			return cn.render(c, st, "device", v)
		})
	}
	v.Data = p
	return cn.render(c, http.StatusOK, "device", v)
}

func (cn *Console) decideDevice(c *fiber.Ctx, s *session) error {
	code, action := c.FormValue("user_code"), c.FormValue("action")
	v := view{S: s, Title: "Connect a device", Nav: "device"}
	if action != "approve" && action != "deny" {
		v.Error = "Choose Approve or Deny."
		return cn.render(c, http.StatusBadRequest, "device", v)
	}
	var out api.ApproveResult
	body := map[string]any{"user_code": code, "action": action}
	if err := cn.call(c, s.creds, http.MethodPost, "/openapi/v1/oauth/device/approve", body, &out); err != nil {
		return cn.refused(c, err, func(st int, e view) error {
			v.Error = e.Error
			return cn.render(c, st, "device", v)
		})
	}
	msg := "Approved: the device is connected and can now call the API as you asked. You can close this page."
	if out.Status == "DENIED" {
		msg = "Denied: the device will not be connected."
	}
	return cn.render(c, http.StatusOK, "message", view{S: s, Title: "Connect a device", Nav: "device", Message: msg,
		Back: Prefix + "/device"})
}
