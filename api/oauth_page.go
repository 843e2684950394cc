package api

import (
	"crypto/subtle"
	_ "embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// The verification page of the device flow: plain server-rendered HTML, no
// JavaScript. A person types the user code (or follows
// verification_uri_complete), sees which app asks and for which scopes (RFC
// 8628 section 5.4, also for a code typed by hand), signs in with a console
// session if the browser has none for that workspace, and approves or denies.
// Forms carry a CSRF token that must match a SameSite=Strict cookie set with
// the page (double submit).

const (
	csrfCookie = "pmapi_csrf"
	devicePath = "/openapi/v1/oauth/device"
)

//go:embed oauth_page.tmpl
var devicePageHTML string

var devicePageTmpl = template.Must(template.New("device").Parse(devicePageHTML))

type devicePageData struct {
	// Step is "code" (ask for it), "review" (the app, its scopes, then sign
	// in or decide) or "" (a message only).
	Step       string
	Error      bool
	Message    string
	UserCode   string
	CSRF       string
	App        string
	ClientID   string
	Workspace  string
	Scopes     []scopeLine
	SignedInAs string
}

type scopeLine struct{ Name, Text string }

// describeScopes says what each scope lets the app do, from its name.
func describeScopes(names []string) []scopeLine {
	out := make([]scopeLine, 0, len(names))
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
		out = append(out, scopeLine{Name: n, Text: text})
	}
	return out
}

func renderDevicePage(c *fiber.Ctx, status int, d devicePageData) error {
	var b strings.Builder
	if err := devicePageTmpl.Execute(&b, d); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "no-referrer")
	return c.Status(status).SendString(b.String())
}

// formatUserCode shows a code as the device does (XXXX-XXXX).
func formatUserCode(code string) string {
	n := authz.NormalizeUserCode(code)
	if len(n) == 8 {
		return n[:4] + "-" + n[4:]
	}
	return n
}

// pending is what the page knows about a user code: its workspace, the app
// and the scopes asked for. A miss answers the page for it.
type pending struct {
	ws     tenant.Workspace
	shard  *tenant.Shard
	app    authz.App
	scopes []string
}

var errNoPending = pmapi.Errorf(pmapi.CodeNotFound, "No pending authorization has this code. Check it and try again.")

// lookupPending finds the pending authorization behind code. Misses count as
// wrong guesses per caller address (RFC 8628 section 5.1): the page shows the
// app to anyone holding a valid code, so it must not be an oracle for them.
func (s *Server) lookupPending(c *fiber.Ctx, code string) (pending, error) {
	key := "page-ip:" + c.IP()
	if s.guesses.blocked(key) {
		return pending{}, pmapi.Errorf(pmapi.CodeRateLimited, "Too many wrong codes. Try again later.")
	}
	var p pending
	var err error
	if p.ws, err = s.OAuth.WorkspaceOfUserCode(c.UserContext(), code); err == nil {
		if p.shard, err = s.Directory.ShardOf(p.ws); err != nil {
			return p, err
		}
		var client string
		var scopes authz.Scopes
		if client, scopes, err = s.OAuth.PendingApp(c.UserContext(), p.shard, p.ws.ID, code); err == nil {
			p.scopes = scopes.Names()
			p.app, err = authz.GetApp(c.UserContext(), p.shard, p.ws.ID, client)
		}
	}
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		s.guesses.fail(key)
		return p, errNoPending
	}
	return p, err
}

// review is the page for a pending code, signed in as user (nil: not yet).
func review(p pending, code, csrf string, user *authz.User) devicePageData {
	d := devicePageData{Step: "review", UserCode: formatUserCode(code), CSRF: csrf, App: p.app.Name, ClientID: p.app.ClientID,
		Workspace: p.ws.Name, Scopes: describeScopes(p.scopes)}
	if user != nil {
		d.SignedInAs = user.Email
	}
	return d
}

// signedIn is the user of the page's sid cookie in the code's workspace.
func signedIn(c *fiber.Ctx, p pending) *authz.User {
	u, err := authz.VerifySession(c.UserContext(), p.shard, p.ws.ID, c.Cookies(cookieSession))
	if err != nil {
		return nil
	}
	return &u
}

// pageError answers a lookup's failure as the page: the code form again with
// the message, or an internal error.
func pageError(c *fiber.Ctx, err error, code, csrf string) error {
	status := http.StatusNotFound
	switch pmapi.ErrorCode(err) {
	case pmapi.CodeNotFound:
	case pmapi.CodeRateLimited:
		status = http.StatusTooManyRequests
		c.Set(fiber.HeaderRetryAfter, "600")
	default:
		return err
	}
	return renderDevicePage(c, status, devicePageData{Step: "code", Error: true, Message: pmapi.AsError(err).Message, UserCode: formatUserCode(code), CSRF: csrf})
}

func (s *Server) devicePage(c *fiber.Ctx) error {
	token := pmapi.RandomBase62(32)
	c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: token, Path: devicePath, HTTPOnly: true, SameSite: "Strict", Secure: strings.HasPrefix(s.baseURL(c), "https:")})
	code := c.Query("user_code")
	if authz.NormalizeUserCode(code) == "" {
		return renderDevicePage(c, http.StatusOK, devicePageData{Step: "code", CSRF: token})
	}
	p, err := s.lookupPending(c, code)
	if err != nil {
		return pageError(c, err, code, token)
	}
	return renderDevicePage(c, http.StatusOK, review(p, code, token, signedIn(c, p)))
}

func (s *Server) devicePageSubmit(c *fiber.Ctx) error {
	form := formValues(c)
	code, action := form.Get("user_code"), form.Get("action")
	given, cookie := form.Get("csrf"), c.Cookies(csrfCookie)
	if cookie == "" || subtle.ConstantTimeCompare([]byte(given), []byte(cookie)) != 1 {
		return renderDevicePage(c, http.StatusForbidden, devicePageData{Error: true, Message: "This form has expired. Open the page again."})
	}
	if action != "approve" && action != "deny" && action != "signin" {
		return renderDevicePage(c, http.StatusBadRequest, devicePageData{Step: "code", Error: true, UserCode: formatUserCode(code), CSRF: cookie,
			Message: "Choose Approve or Deny."})
	}
	p, err := s.lookupPending(c, code)
	if err != nil {
		return pageError(c, err, code, cookie)
	}
	if action == "signin" {
		return s.deviceSignIn(c, p, code, cookie, form.Get("sid"))
	}
	user := signedIn(c, p)
	if user == nil {
		d := review(p, code, cookie, nil)
		d.Error, d.Message = true, "Sign in to the console of this workspace first, then decide."
		return renderDevicePage(c, http.StatusUnauthorized, d)
	}
	if err := s.decide(c, *user, "page:"+p.ws.ID.String(), code, action == "approve"); err != nil {
		return pageError(c, err, code, cookie)
	}
	msg := "Done: " + p.app.Name + " is connected. You can close this page."
	if action == "deny" {
		msg = "Denied: " + p.app.Name + " will not be connected."
	}
	return renderDevicePage(c, http.StatusOK, devicePageData{Message: msg})
}

// deviceSignIn takes a console session pasted into the page (what pmapi dev
// prints as SID) and keeps it in a cookie scoped to this page, so a person can
// decide in the browser without a console of their own.
func (s *Server) deviceSignIn(c *fiber.Ctx, p pending, code, csrf, sid string) error {
	user, err := authz.VerifySession(c.UserContext(), p.shard, p.ws.ID, strings.TrimSpace(sid))
	if err != nil {
		d := review(p, code, csrf, nil)
		d.Error, d.Message = true, "That session is not valid for this workspace (wrong, expired or revoked)."
		return renderDevicePage(c, http.StatusUnauthorized, d)
	}
	c.Cookie(&fiber.Cookie{Name: cookieSession, Value: strings.TrimSpace(sid), Path: devicePath, HTTPOnly: true, SameSite: "Strict",
		Secure: strings.HasPrefix(s.baseURL(c), "https:")})
	return renderDevicePage(c, http.StatusOK, review(p, code, csrf, &user))
}
