package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
)

// The keys page of an app: its keys, paged, with prefix, status, expiry and
// last use; create with scopes (the key shown once), renew, regenerate with a
// grace period (the new value shown once), revoke.

type keysData struct {
	Keys       []api.KeyView
	NextCursor string
	// Created is a new or regenerated key, shown this once.
	Created *api.KeyCreated
}

func (cn *Console) keysPage(c *fiber.Ctx, s *session) error {
	return cn.showKeys(c, s, http.StatusOK, view{Notice: noticeOf(c)}, &keysData{})
}

func (cn *Console) showKeys(c *fiber.Ctx, s *session, status int, v view, d *keysData) error {
	app, err := cn.appOf(c, s)
	if err != nil {
		return cn.fail(c, err)
	}
	var list api.KeyList
	path := apiPath(listQuery(c), "openapi", "v1", "apps", app.ClientID, "keys")
	if err := cn.call(c, s.creds, http.MethodGet, path, nil, &list); err != nil {
		return cn.fail(c, err)
	}
	d.Keys = list.Items
	if list.NextCursor != nil {
		d.NextCursor = *list.NextCursor
	}
	v.S, v.Title, v.Nav, v.App, v.Tab, v.Data = s, "Keys of "+app.Name, "apps", app, "keys", d
	return cn.render(c, status, "keys", v)
}

func (cn *Console) createKey(c *fiber.Ctx, s *session) error {
	body := map[string]any{"scopes": formList(c, "scopes")}
	if name := strings.TrimSpace(c.FormValue("name")); name != "" {
		body["name"] = name
	}
	if exp := dateEnd(c.FormValue("expiresAt")); exp != nil {
		body["expiresAt"] = exp
	}
	var created api.KeyCreated
	path := apiPath(nil, "openapi", "v1", "apps", c.Params("clientId"), "keys")
	if err := cn.call(c, s.creds, http.MethodPost, path, body, &created); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showKeys(c, s, st, v, &keysData{}) })
	}
	return cn.showKeys(c, s, http.StatusCreated, view{Notice: "Key " + created.Name + " is created."},
		&keysData{Created: &created})
}

func (cn *Console) keyAction(c *fiber.Ctx, s *session) error {
	app, id := c.Params("clientId"), c.Params("keyId")
	back := Prefix + "/apps/" + app + "/keys"
	show := func(st int, v view) error { return cn.showKeys(c, s, st, v, &keysData{}) }
	switch c.Params("action") {
	case "renew":
		body := map[string]any{}
		if exp := dateEnd(c.FormValue("expiresAt")); exp != nil {
			body["expiresAt"] = exp
		}
		if err := cn.call(c, s.creds, http.MethodPost, apiPath(nil, "openapi", "v1", "apps", app, "keys", id, "renew"),
			body, nil); err != nil {
			return cn.refused(c, err, show)
		}
		return done(c, back, "renewed")
	case "regenerate":
		body := map[string]any{}
		if g := strings.TrimSpace(c.FormValue("graceSeconds")); g != "" {
			n, err := strconv.Atoi(g)
			if err != nil {
				return show(http.StatusBadRequest, view{Error: "The grace period must be a whole number of seconds."})
			}
			body["graceSeconds"] = n
		}
		var created api.KeyCreated
		if err := cn.call(c, s.creds, http.MethodPost, apiPath(nil, "openapi", "v1", "apps", app, "keys", id, "regenerate"),
			body, &created); err != nil {
			return cn.refused(c, err, show)
		}
		return cn.showKeys(c, s, http.StatusCreated, view{Notice: "Key " + created.Name + " has a new value."},
			&keysData{Created: &created})
	case "revoke":
		if err := cn.call(c, s.creds, http.MethodDelete, apiPath(nil, "openapi", "v1", "apps", app, "keys", id),
			nil, nil); err != nil {
			return cn.refused(c, err, show)
		}
		return done(c, back, "revoked")
	}
	return show(http.StatusNotFound, view{Error: "There is no such thing to do to a key."})
}
