package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/resource/webhook"
)

// The deliveries of an app: filtered and paged as the API's list (subscription,
// status, event type, since), one delivery with its attempt log and body, and
// replay of one or of many chosen deliveries.

type deliveriesData struct {
	Items      []webhook.DeliveryView
	NextCursor string
	Subs       []webhook.SubscriptionView
	Statuses   []string
	Filter     struct{ SubscriptionID, Status, EventType, Since string }
	// Next is the next page's address, with the filters.
	Next string
}

func (cn *Console) deliveriesPage(c *fiber.Ctx, s *session) error {
	return cn.showDeliveries(c, s, http.StatusOK, view{Notice: noticeOf(c)})
}

func (cn *Console) showDeliveries(c *fiber.Ctx, s *session, status int, v view) error {
	app, err := cn.appOf(c, s)
	if err != nil {
		return cn.fail(c, err)
	}
	d := &deliveriesData{Statuses: []string{"PENDING", "RETRYING", "SUCCEEDED", "DEAD", "CANCELLED"}}
	f := &d.Filter
	f.SubscriptionID, f.Status, f.EventType, f.Since = c.Query(
		"subscriptionId",
	), c.Query(
		"status",
	), c.Query(
		"eventType",
	), c.Query(
		"since",
	)
	q := listQuery(c)
	filters := map[string]string{"subscriptionId": f.SubscriptionID, "status": f.Status, "eventType": f.EventType}
	for k, val := range filters {
		if val != "" {
			q.Set(k, val)
		}
	}
	if f.Since != "" {
		// The form's datetime-local is the browser's wall clock, read as UTC.
		since := f.Since
		if t, err := time.Parse("2006-01-02T15:04", since); err == nil {
			since = t.UTC().Format(time.RFC3339)
		}
		q.Set("since", since)
	}
	var subs webhook.SubscriptionList
	if err := cn.call(c, s.creds, http.MethodGet, apiPath(url.Values{"limit": {"200"}}, "openapi", "v1", "apps",
		app.ClientID, "webhooks"), nil, &subs); err != nil {
		return cn.fail(c, err)
	}
	d.Subs = subs.Items
	v.S, v.Title, v.Nav, v.App, v.Tab, v.Data = s, "Deliveries of "+app.Name, "apps", app, "deliveries", d
	var list webhook.DeliveryList
	if err := cn.call(c, s.creds, http.MethodGet, apiPath(q, "openapi", "v1", "apps", app.ClientID, "deliveries"), nil,
		&list); err != nil {
		if err.Status != http.StatusBadRequest {
			return cn.fail(c, err)
		}
		v.Error = "The filters were refused: " + err.Text()
		return cn.render(c, http.StatusBadRequest, "deliveries", v)
	}
	d.Items = list.Items
	if list.NextCursor != nil {
		next := url.Values{}
		for k, val := range map[string]string{"subscriptionId": f.SubscriptionID, "status": f.Status,
			"eventType": f.EventType, "since": f.Since, "cursor": *list.NextCursor} {
			if val != "" {
				next.Set(k, val)
			}
		}
		d.Next = Prefix + "/apps/" + url.PathEscape(app.ClientID) + "/deliveries?" + next.Encode()
	}
	return cn.render(c, status, "deliveries", v)
}

type deliveryData struct {
	Delivery webhook.DeliveryDetail
	Body     string
}

func (cn *Console) deliveryPage(c *fiber.Ctx, s *session) error {
	app, err := cn.appOf(c, s)
	if err != nil {
		return cn.fail(c, err)
	}
	var d deliveryData
	path := apiPath(nil, "openapi", "v1", "apps", app.ClientID, "deliveries", c.Params("deliveryId"))
	if err := cn.call(c, s.creds, http.MethodGet, path, nil, &d.Delivery); err != nil {
		return cn.fail(c, err)
	}
	body, _ := json.MarshalIndent(d.Delivery.Data, "", "  ")
	d.Body = string(body)
	return cn.render(
		c,
		http.StatusOK,
		"delivery",
		view{S: s, Title: "Delivery " + d.Delivery.ID, Nav: "apps", App: app, Tab: "deliveries",
			Notice: noticeOf(c), Data: d},
	)
}

func (cn *Console) replayOne(c *fiber.Ctx, s *session) error {
	app := c.Params("clientId")
	var out webhook.DeliveryView
	path := apiPath(nil, "openapi", "v1", "apps", app, "deliveries", c.Params("deliveryId"), "replay")
	if err := cn.call(c, s.creds, http.MethodPost, path, nil, &out); err != nil {
		return cn.refused(c, err, func(st int, v view) error { return cn.showDeliveries(c, s, st, v) })
	}
	return done(c, Prefix+"/apps/"+url.PathEscape(app)+"/deliveries/"+url.PathEscape(out.ID), "replayed")
}

// replayMany replays each chosen delivery, as many calls of the API's replay.
func (cn *Console) replayMany(c *fiber.Ctx, s *session) error {
	app := c.Params("clientId")
	ids := formList(c, "ids")
	show := func(st int, v view) error { return cn.showDeliveries(c, s, st, v) }
	if len(ids) == 0 {
		return show(http.StatusBadRequest, view{Error: "Choose the deliveries to replay."})
	}
	if len(ids) > 200 {
		return show(http.StatusBadRequest, view{Error: "Replay at most 200 deliveries at a time."})
	}
	var failed []string
	for _, id := range ids {
		path := apiPath(nil, "openapi", "v1", "apps", app, "deliveries", id, "replay")
		if err := cn.call(c, s.creds, http.MethodPost, path, nil, nil); err != nil {
			if err.Status >= 500 {
				return cn.fail(c, err)
			}
			failed = append(failed, id+": "+err.Text())
		}
	}
	if len(failed) > 0 {
		return show(http.StatusConflict, view{Error: "Replayed " + strconv.Itoa(len(ids)-len(failed)) + " of " +
			strconv.Itoa(len(ids)) + ". Not replayed: " + strings.Join(failed, " ")})
	}
	return done(c, Prefix+"/apps/"+url.PathEscape(app)+"/deliveries", "replayed")
}
