package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/webhook"
)

// The webhooks page of an app: its subscriptions, paged; subscribe with the
// event-type picker (the signing secret shown once), send a test delivery,
// rotate the secret (the new one shown once), disable and enable.

type webhooksData struct {
	Subs       []webhook.SubscriptionView
	NextCursor string
	EventTypes []api.EventTypeView
	// Secret is a new subscription's or a rotated secret, shown this once.
	Secret, SecretOf string
	// Tested is the answer of a test delivery, by subscription.
	Tested map[string]string
	Form   struct {
		URL    string
		Events []string
	}
}

func (cn *Console) webhooksPage(c *fiber.Ctx, s *session) error {
	return cn.showWebhooks(c, s, http.StatusOK, view{Notice: noticeOf(c)}, &webhooksData{})
}

func (cn *Console) showWebhooks(c *fiber.Ctx, s *session, status int, v view, d *webhooksData) error {
	app, err := cn.appOf(c, s)
	if err != nil {
		return cn.fail(c, err)
	}
	var list webhook.SubscriptionList
	path := apiPath(listQuery(c), "openapi", "v1", "apps", app.ClientID, "webhooks")
	if err := cn.call(c, s.creds, http.MethodGet, path, nil, &list); err != nil {
		return cn.fail(c, err)
	}
	var types api.EventTypeList
	if err := cn.call(c, s.creds, http.MethodGet, "/openapi/v1/webhooks/event-types", nil, &types); err != nil {
		return cn.fail(c, err)
	}
	d.Subs, d.EventTypes = list.Items, types.Items
	if list.NextCursor != nil {
		d.NextCursor = *list.NextCursor
	}
	v.S, v.Title, v.Nav, v.App, v.Tab, v.Data = s, "Webhooks of "+app.Name, "apps", app, "webhooks", d
	return cn.render(c, status, "webhooks", v)
}

func (cn *Console) createWebhook(c *fiber.Ctx, s *session) error {
	d := &webhooksData{}
	d.Form.URL, d.Form.Events = strings.TrimSpace(c.FormValue("url")), formList(c, "events")
	var created webhook.SubscriptionCreated
	path := apiPath(nil, "openapi", "v1", "apps", c.Params("clientId"), "webhooks")
	body := map[string]any{"url": d.Form.URL, "events": d.Form.Events}
	if err := cn.call(c, s.creds, http.MethodPost, path, body, &created); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showWebhooks(c, s, st, v, d) })
	}
	return cn.showWebhooks(c, s, http.StatusCreated, view{Notice: "Subscribed " + created.URL + "."},
		&webhooksData{Secret: created.Secret, SecretOf: created.ID})
}

func (cn *Console) webhookAction(c *fiber.Ctx, s *session) error {
	app, id := c.Params("clientId"), c.Params("subId")
	back := Prefix + "/apps/" + app + "/webhooks"
	one := func(verb string) string { return apiPath(nil, "openapi", "v1", "apps", app, "webhooks", id, verb) }
	show := func(st int, v view) error { return cn.showWebhooks(c, s, st, v, &webhooksData{}) }
	switch c.Params("action") {
	case "test":
		var out webhook.TestResult
		if err := cn.call(c, s.creds, http.MethodPost, one("test"), nil, &out); err != nil {
			return cn.refused(c, err, show)
		}
		text := fmt.Sprintf("Delivered: the endpoint answered %d (delivery %s).", out.Status, out.DeliveryID)
		if !out.Delivered {
			text = fmt.Sprintf("Not delivered: the endpoint answered %d", out.Status)
			if out.Error != nil {
				text += " (" + *out.Error + ")"
			}
			text += fmt.Sprintf("; delivery %s.", out.DeliveryID)
		}
		return cn.showWebhooks(c, s, http.StatusOK, view{}, &webhooksData{Tested: map[string]string{id: text}})
	case "rotate":
		var out webhook.SecretRotated
		if err := cn.call(c, s.creds, http.MethodPost, one("rotate-secret"), map[string]any{}, &out); err != nil {
			return cn.refused(c, err, show)
		}
		return cn.showWebhooks(c, s, http.StatusCreated, view{Notice: "The secret is rotated: the old one keeps " +
			"signing alongside for a day."}, &webhooksData{Secret: out.Secret, SecretOf: out.ID})
	case "disable", "enable":
		verb := c.Params("action")
		if err := cn.call(c, s.creds, http.MethodPost, one(verb), nil, nil); err != nil {
			return cn.refused(c, err, show)
		}
		return done(c, back, "sub-"+verb+"d")
	}
	return show(http.StatusNotFound, view{Error: "There is no such thing to do to a webhook."})
}
