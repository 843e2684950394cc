package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
)

// What the pages share: reading forms, the app a page is about, the page
// size and cursor of lists, and the notices a redirect carries.

// pageSize is the console's page of a list (the API's limit).
const pageSize = 20

// formList is every value of a repeated form field (checkboxes).
func formList(c *fiber.Ctx, name string) []string {
	out := []string{}
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		if s := strings.TrimSpace(string(v)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// listQuery is the API list's query: the page size and the cursor given.
func listQuery(c *fiber.Ctx) url.Values {
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	if cur := c.Query("cursor"); cur != "" {
		q.Set("cursor", cur)
	}
	return q
}

// dateEnd turns a date field (2027-01-31) into the end of that day, UTC;
// nil for an empty field. A malformed date is passed on as it is, so the API
// names the field.
func dateEnd(v string) any {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if d, err := time.Parse("2006-01-02", v); err == nil {
		return d.Add(24*time.Hour - time.Second).UTC().Format(time.RFC3339)
	}
	return v
}

// appOf reads the app of the path's clientId with the session.
func (cn *Console) appOf(c *fiber.Ctx, s *session) (api.AppView, *apiError) {
	var app api.AppView
	err := cn.call(c, s.creds, http.MethodGet, apiPath(nil, "openapi", "v1", "apps", c.Params("clientId")), nil, &app)
	return app, err
}

// notices are what a redirect after a change says, by the key it carries.
var notices = map[string]string{
	"disabled":     "The app is disabled: its keys and tokens answer 403 APP_DISABLED until it is enabled.",
	"enabled":      "The app is enabled again.",
	"deleted":      "The app is deleted.",
	"kept":         "The app still has active keys, webhooks or OAuth grants, so it was disabled instead of deleted.",
	"renewed":      "The key is renewed.",
	"revoked":      "The key is revoked: it stops working at once.",
	"sub-disabled": "The webhook is disabled: nothing more is delivered to it, and pending retries are cancelled.",
	"sub-enabled":  "The webhook is enabled again.",
	"replayed":     "Replayed: the new deliveries are at the top of the list.",
}

// done redirects to to with a notice.
func done(c *fiber.Ctx, to, notice string) error {
	sep := "?"
	if strings.Contains(to, "?") {
		sep = "&"
	}
	return c.Redirect(to+sep+"done="+notice, http.StatusSeeOther)
}

// noticeOf is the notice the request's done names.
func noticeOf(c *fiber.Ctx) string { return notices[c.Query("done")] }
