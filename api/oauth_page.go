package api

import (
	"crypto/subtle"
	"html/template"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
)

// The verification page of the device flow: plain server-rendered HTML, no
// JavaScript. A person signed in to the console (cookie sid) types or confirms
// the user code and approves or denies. Forms carry a CSRF token that must match
// a SameSite=Strict cookie set with the page (double submit).

const csrfCookie = "pmapi_csrf"

var devicePageTmpl = template.Must(template.New("device").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Connect a device — pmapi</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
input{font-size:1.4rem;letter-spacing:.2rem;text-transform:uppercase;width:12rem}button{font-size:1rem;margin-right:.5rem}
.note{color:#555}.err{color:#a00}</style></head><body>
<h1>Connect a device</h1>
{{if .Message}}<p class="{{if .Error}}err{{else}}note{{end}}">{{.Message}}</p>{{end}}
{{if .Form}}
{{if .App}}<p><strong>{{.App}}</strong> asks for: {{range .Scopes}}<code>{{.}}</code> {{end}}</p>{{end}}
<form method="post" action="/openapi/v1/oauth/device">
<label>Code shown on the device<br><input name="user_code" value="{{.UserCode}}" autocomplete="off" required></label>
<input type="hidden" name="csrf" value="{{.CSRF}}">
<p><button name="action" value="approve">Approve</button><button name="action" value="deny">Deny</button></p>
</form>
<p class="note">You must be signed in to the console of the workspace the device asks for.</p>
{{end}}
</body></html>`))

type devicePageData struct {
	Form, Error bool
	Message     string
	UserCode    string
	CSRF        string
	App         string
	Scopes      []string
}

func renderDevicePage(c *fiber.Ctx, status int, d devicePageData) error {
	var b strings.Builder
	if err := devicePageTmpl.Execute(&b, d); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	c.Set("X-Frame-Options", "DENY")
	return c.Status(status).SendString(b.String())
}

func (s *Server) devicePage(c *fiber.Ctx) error {
	token := pmapi.RandomBase62(32)
	c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: token, Path: "/openapi/v1/oauth/device", HTTPOnly: true, SameSite: "Strict", Secure: strings.HasPrefix(s.baseURL(c), "https:")})
	d := devicePageData{Form: true, CSRF: token, UserCode: authz.NormalizeUserCode(c.Query("user_code"))}
	if d.UserCode != "" {
		if w, err := s.OAuth.WorkspaceOfUserCode(c.UserContext(), d.UserCode); err == nil {
			if shard, err := s.Directory.ShardOf(w); err == nil {
				if client, scopes, err := s.OAuth.PendingApp(c.UserContext(), shard, w.ID, d.UserCode); err == nil {
					if app, err := authz.GetApp(c.UserContext(), shard, w.ID, client); err == nil {
						d.App, d.Scopes = app.Name, scopes.Names()
					}
				}
			}
		}
	}
	return renderDevicePage(c, http.StatusOK, d)
}

func (s *Server) devicePageSubmit(c *fiber.Ctx) error {
	form := formValues(c)
	code, action := form.Get("user_code"), form.Get("action")
	given, cookie := form.Get("csrf"), c.Cookies(csrfCookie)
	if cookie == "" || subtle.ConstantTimeCompare([]byte(given), []byte(cookie)) != 1 {
		return renderDevicePage(c, http.StatusForbidden, devicePageData{Error: true, Message: "This form has expired. Open the page again."})
	}
	retry := devicePageData{Form: true, CSRF: cookie, UserCode: authz.NormalizeUserCode(code), Error: true}
	if action != "approve" && action != "deny" {
		retry.Message = "Choose Approve or Deny."
		return renderDevicePage(c, http.StatusBadRequest, retry)
	}
	w, err := s.OAuth.WorkspaceOfUserCode(c.UserContext(), code)
	if err != nil {
		retry.Message = "No pending authorization has this code. Check it and try again."
		return renderDevicePage(c, http.StatusNotFound, retry)
	}
	shard, err := s.Directory.ShardOf(w)
	if err != nil {
		return err
	}
	user, err := authz.VerifySession(c.UserContext(), shard, w.ID, c.Cookies(cookieSession))
	if err != nil {
		retry.Message = "Sign in to the console of this workspace first, then try again."
		return renderDevicePage(c, http.StatusUnauthorized, retry)
	}
	if err := s.decide(c, user, "page:"+w.ID.String(), code, action == "approve"); err != nil {
		e := pmapi.AsError(err)
		retry.Message = "No pending authorization has this code. Check it and try again."
		status := http.StatusNotFound
		if e.Code == pmapi.CodeRateLimited {
			retry.Message, status = "Too many wrong codes. Try again later.", http.StatusTooManyRequests
		} else if e.Code != pmapi.CodeNotFound {
			return err
		}
		return renderDevicePage(c, status, retry)
	}
	msg := "Done: the device is connected. You can close this page."
	if action == "deny" {
		msg = "Denied: the device will not be connected."
	}
	return renderDevicePage(c, http.StatusOK, devicePageData{Message: msg})
}
