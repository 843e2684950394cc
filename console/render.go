package console

import (
	"bytes"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// view is what every page template gets.
type view struct {
	// S is the signed-in person; nil on the sign-in pages.
	S     *session
	Title string
	// Nav names the navigation entry to mark as current.
	Nav string
	// Error is an API error, as the person reads it; Notice a success.
	Error, Notice string
	// Message and Back make the message page.
	Message, Back string
	// CSRF is the token of a form shown before there is a session (pick).
	CSRF string
	// App is the app whose pages these are; Tab the one shown (keys,
	// webhooks, deliveries).
	Tab  string
	App  any
	Data any
}

var funcs = template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return "—"
	},
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"has":  func(s []string, v string) bool { return slices.Contains(s, v) },
	"str": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
	"num": func(p *int) string {
		if p == nil {
			return "—"
		}
		return strconv.Itoa(*p)
	},
}

var pageCache sync.Map // name -> *template.Template

func page(name string) *template.Template {
	if t, ok := pageCache.Load(name); ok {
		return t.(*template.Template)
	}
	t := template.Must(
		template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"),
	)
	pageCache.Store(name, t)
	return t
}

// render writes the page name with v.
func (cn *Console) render(c *fiber.Ctx, status int, name string, v view) error {
	var b bytes.Buffer
	if err := page(name).ExecuteTemplate(&b, "layout", v); err != nil {
		cn.cfg.Log.Error("console page", "page", name, "error", err.Error())
		return c.Status(http.StatusInternalServerError).SendString("the page could not be made")
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(b.Bytes())
}

// fail answers an API error that leaves nothing to show on the page that
// asked (the app is not found, the API is down) as a message page with the
// API's status.
func (cn *Console) fail(c *fiber.Ctx, err *apiError) error {
	status := err.Status
	if status < 400 {
		status = http.StatusInternalServerError
	}
	if err.cause != nil || status >= 500 {
		cn.cfg.Log.Error("console", "path", c.Path(), "code", err.Code, "error", errText(err))
	}
	return cn.render(c, status, "message", view{Title: titleOf(status), Message: err.Text(), Back: Prefix + "/apps"})
}

func errText(err *apiError) string {
	if err.cause != nil {
		return err.cause.Error()
	}
	return err.Message
}

func titleOf(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Not found"
	case http.StatusUnauthorized, http.StatusForbidden:
		return "Not allowed"
	case http.StatusTooManyRequests:
		return "Too many attempts"
	}
	if status >= 500 {
		return "Something went wrong"
	}
	return "That did not work"
}
