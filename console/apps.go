package console

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
)

// The apps page: the workspace's apps, paged; create (the secret shown
// once), disable and enable, delete.

type appsData struct {
	Apps       []api.AppView
	NextCursor string
	AllScopes  []string
	// Created is a new app with its secret, shown this once.
	Created *api.AppCreated
	// Form keeps what was typed when the API refused it.
	Form struct {
		Name, Description string
		Scopes            []string
	}
}

func (cn *Console) appsPage(c *fiber.Ctx, s *session) error {
	return cn.showApps(c, s, http.StatusOK, view{Notice: noticeOf(c)}, &appsData{})
}

func (cn *Console) showApps(c *fiber.Ctx, s *session, status int, v view, d *appsData) error {
	var list api.AppList
	if err := cn.call(c, s.creds, http.MethodGet, apiPath(listQuery(c), "openapi", "v1", "apps"), nil, &list); err != nil {
		return cn.fail(c, err)
	}
	d.Apps, d.AllScopes = list.Items, authz.AllScopeNames()
	if list.NextCursor != nil {
		d.NextCursor = *list.NextCursor
	}
	v.S, v.Title, v.Nav, v.Data = s, "Apps", "apps", d
	return cn.render(c, status, "apps", v)
}

func (cn *Console) createApp(c *fiber.Ctx, s *session) error {
	d := &appsData{}
	d.Form.Name, d.Form.Description, d.Form.Scopes = c.FormValue(
		"name",
	), c.FormValue(
		"description",
	), formList(
		c,
		"scopes",
	)
	body := map[string]any{"workspaceId": s.Workspace.WorkspaceID, "name": d.Form.Name, "scopes": d.Form.Scopes}
	if desc := strings.TrimSpace(d.Form.Description); desc != "" {
		body["description"] = desc
	}
	var created api.AppCreated
	if err := cn.call(c, s.creds, http.MethodPost, "/openapi/v1/apps", body, &created); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showApps(c, s, st, v, d) })
	}
	d.Created = &created
	d.Form.Name, d.Form.Description, d.Form.Scopes = "", "", nil
	return cn.showApps(c, s, http.StatusCreated, view{Notice: "App " + created.Name + " is created."}, d)
}

func (cn *Console) setAppStatus(c *fiber.Ctx, s *session) error {
	status, notice := "DISABLED", "disabled"
	if c.FormValue("action") == "enable" {
		status, notice = "ACTIVE", "enabled"
	}
	path := apiPath(nil, "openapi", "v1", "apps", c.Params("clientId"))
	if err := cn.call(c, s.creds, http.MethodPatch, path, map[string]any{"status": status}, nil); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showApps(c, s, st, v, &appsData{}) })
	}
	return done(c, Prefix+"/apps", notice)
}

func (cn *Console) deleteApp(c *fiber.Ctx, s *session) error {
	var out api.AppDeleted
	path := apiPath(nil, "openapi", "v1", "apps", c.Params("clientId"))
	if err := cn.call(c, s.creds, http.MethodDelete, path, nil, &out); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showApps(c, s, st, v, &appsData{}) })
	}
	if !out.Deleted {
		return done(c, Prefix+"/apps", "kept")
	}
	return done(c, Prefix+"/apps", "deleted")
}

// refused shows an API's 4xx answer on the page again (show), with the
// API's status and message; anything else fails.
func (cn *Console) refused(c *fiber.Ctx, err *apiError, show func(status int, v view) error) error {
	if err.Status < 400 || err.Status >= 500 {
		return cn.fail(c, err)
	}
	return show(err.Status, view{Error: err.Text()})
}
