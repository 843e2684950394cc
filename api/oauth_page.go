package api

import (
	"html"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
)

// The device flow's verification URI is a page of the console
// (ConsoleDevicePage), where the signed-in session approves: this path, which
// devices print as verification_uri, sends the browser there with its code.
// The console's page reads the pending authorization through
// GET /openapi/v1/oauth/device/pending (RFC 8628 section 5.4: the person sees
// which app asks, and for what, before deciding) and decides through
// POST /openapi/v1/oauth/device/approve, the routes below and in oauth.go.

const devicePath = "/openapi/v1/oauth/device"

// ConsoleDevicePage is the console's device approval page.
const ConsoleDevicePage = "/console/device"

// DevicePendingQuery names the user code to look up.
type DevicePendingQuery struct {
	UserCode string `query:"user_code" required:"true" doc:"As the device shows it; case, dashes and spaces do not matter"`
}

// ScopeLine is a scope with what it lets an app do, in words.
type ScopeLine struct {
	Name        string `json:"name" example:"tasks:write"`
	Description string `json:"description" example:"create and change tasks"`
}

// DevicePending is a pending device authorization of the caller's workspace:
// the app that asks and the scopes it asks for.
type DevicePending struct {
	UserCode  string      `json:"userCode" example:"WDJB-MJHT"`
	ClientID  string      `json:"clientId" example:"pm_cli_4Yq0cJ2bW8rT1mN6pK3s"`
	AppName   string      `json:"appName" example:"Jira sync"`
	Workspace string      `json:"workspace" doc:"The workspace's name" example:"Acme"`
	Scopes    []ScopeLine `json:"scopes"`
}

func (s *Server) devicePageOperations() []Operation {
	const tag = "OAuth"
	return []Operation{
		{
			Method:  http.MethodGet,
			Path:    devicePath + "/pending",
			ID:      "oauthDevicePending",
			Fails:   []pmapi.Code{pmapi.CodeRateLimited},
			Tag:     tag,
			Auth:    AuthSession,
			Query:   DevicePendingQuery{},
			Result:  DevicePending{},
			Status:  http.StatusOK,
			Summary: "The app and scopes a user code of the caller's workspace asks for, before approving it",
			Handler: s.devicePending,
		},
		{Method: http.MethodGet, Path: devicePath, ID: "oauthDevicePage", Tag: tag, Raw: true, HTML: true,
			Summary: "The verification URI: sends the browser to the console's approval page, keeping user_code",
			Status:  http.StatusSeeOther, Handler: toConsoleDevicePage},
		{Method: http.MethodPost, Path: devicePath, ID: "oauthDevicePageSubmit", Tag: tag, Raw: true, HTML: true,
			Summary: "The earlier page's form: sends the browser to the console's approval page, where the session decides",
			Status:  http.StatusSeeOther, Handler: toConsoleDevicePage},
	}
}

// userCodeAlphabet is what user codes are made of (authz).
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// toConsoleDevicePage redirects to the console's page with the code only.
func toConsoleDevicePage(c *fiber.Ctx) error {
	to := ConsoleDevicePage
	code := c.Query("user_code")
	if code == "" {
		code = formValues(c).Get("user_code")
	}
	if n := authz.NormalizeUserCode(code); len(n) == 8 && strings.Trim(n, userCodeAlphabet) == "" {
		to += "?" + url.Values{"user_code": {formatUserCode(n)}}.Encode()
	}
	c.Set(fiber.HeaderLocation, to)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusSeeOther).SendString(`<!doctype html><title>Connect a device</title><a href="` +
		html.EscapeString(to) + `">Continue in the console</a>`)
}

func (s *Server) devicePending(c *fiber.Ctx) error {
	q, err := DecodeQuery[DevicePendingQuery](c)
	if err != nil {
		return err
	}
	if strings.TrimSpace(q.UserCode) == "" {
		return pmapi.Invalid("user_code", "user_code is required")
	}
	user := userOf(c)
	keys := []string{"user:" + user.ID.String(), "client:" + c.Get(headerClientID)}
	if s.guesses.blocked(keys...) {
		c.Set(fiber.HeaderRetryAfter, "600")
		return pmapi.Errorf(pmapi.CodeRateLimited, "too many wrong user codes; try again later")
	}
	res := resolutionOf(c)
	ctx := c.UserContext()
	w, err := s.OAuth.WorkspaceOfUserCode(ctx, q.UserCode)
	var out DevicePending
	if err == nil && w.ID != res.Workspace.ID {
		err = pmapi.NotFound("pending authorization")
	}
	if err == nil {
		var client string
		var scopes authz.Scopes
		if client, scopes, err = s.OAuth.PendingApp(ctx, res.Shard, res.Workspace.ID, q.UserCode); err == nil {
			var app authz.App
			if app, err = authz.GetApp(ctx, res.Shard, res.Workspace.ID, client); err == nil {
				out = DevicePending{UserCode: formatUserCode(q.UserCode), ClientID: app.ClientID, AppName: app.Name,
					Workspace: res.Workspace.Name, Scopes: describeScopes(scopes.Names())}
			}
		}
	}
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		s.guesses.fail(keys...)
		// The same answer whether the code never existed, expired, was decided
		// or belongs to another workspace.
		return pmapi.Errorf(pmapi.CodeNotFound, "no pending authorization has this code")
	}
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, out)
}

// describeScopes says what each scope lets the app do, from its name.
func describeScopes(names []string) []ScopeLine {
	out := make([]ScopeLine, 0, len(names))
	for _, n := range names {
		resource, action, _ := strings.Cut(n, ":")
		what := strings.ReplaceAll(resource, "-", " ")
		if resource == "rrca" {
			what = "root-cause analyses"
		}
		text := "read " + what
		if action == "write" {
			text = "create and change " + what
		}
		out = append(out, ScopeLine{Name: n, Description: text})
	}
	return out
}

// formatUserCode shows a code as the device does (XXXX-XXXX).
func formatUserCode(code string) string {
	n := authz.NormalizeUserCode(code)
	if len(n) == 8 {
		return n[:4] + "-" + n[4:]
	}
	return n
}
