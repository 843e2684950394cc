package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/audit"
)

// The workspace's audit log: GET /openapi/v1/audit in process, filtered by
// action and time and paged as the API pages it.

type auditData struct {
	Items   []api.AuditEntryView
	Actions []string
	Filter  struct{ Action, Since string }
	// Next is the next page's address, with the filters.
	Next string
}

func (cn *Console) auditPage(c *fiber.Ctx, s *session) error {
	d := &auditData{Actions: audit.Actions()}
	d.Filter.Action, d.Filter.Since = c.Query("action"), c.Query("since")
	q := listQuery(c)
	if d.Filter.Action != "" {
		q.Set("action", d.Filter.Action)
	}
	if d.Filter.Since != "" {
		// The form's datetime-local is the browser's wall clock, read as UTC.
		since := d.Filter.Since
		if t, err := time.Parse("2006-01-02T15:04", since); err == nil {
			since = t.UTC().Format(time.RFC3339)
		}
		q.Set("since", since)
	}
	v := view{S: s, Title: "Audit log", Nav: "audit", Data: d}
	var list api.AuditList
	if err := cn.call(c, s.creds, http.MethodGet, apiPath(q, "openapi", "v1", "audit"), nil, &list); err != nil {
		if err.Status != http.StatusBadRequest {
			return cn.fail(c, err)
		}
		v.Error = "The filters were refused: " + err.Text()
		return cn.render(c, http.StatusBadRequest, "audit", v)
	}
	d.Items = list.Items
	if list.NextCursor != nil {
		next := url.Values{"cursor": {*list.NextCursor}}
		for k, val := range map[string]string{"action": d.Filter.Action, "since": d.Filter.Since} {
			if val != "" {
				next.Set(k, val)
			}
		}
		d.Next = Prefix + "/audit?" + next.Encode()
	}
	return cn.render(c, http.StatusOK, "audit", v)
}
