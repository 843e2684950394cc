package api_test

import (
	"strings"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// The drivers of the console's operations (apps, keys, webhook
// subscriptions, device approval), the deliveries and search.

// isoOnApp drives a console operation on w's app (path built by at from the
// client id and, for sub-resources, an id of kind); another workspace's app,
// or its sub-resource under w's app, is 404.
func isoOnApp(method, kind string, at func(app, id string) string, body func(c isoCtx) any,
	own func(c isoCtx) string) func(isoCtx) {
	return func(c isoCtx) {
		var b any
		if body != nil {
			b = body(c)
		}
		if c.foreign {
			app, id := c.x.tn.ClientID, c.x.pick(c.s.rnd, kind)
			if kind != "" && c.s.rnd.IntN(2) == 0 {
				app = c.w.tn.ClientID
			}
			c.notFound(c.console(method, at(app, id), b, app, id))
			return
		}
		id := ""
		if own != nil {
			id = own(c)
		} else if kind != "" {
			id = c.w.pick(c.s.rnd, kind)
		}
		c.own(c.console(method, at(c.w.tn.ClientID, id), b))
	}
}

// isoDelivery drives a key operation on one delivery of w's app.
func isoDelivery(method string, at func(id string) string) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			id := c.x.pick(c.s.rnd, "delivery")
			c.notFound(c.key(method, at(id), nil, id))
			return
		}
		r := c.key(method, at(c.w.pick(c.s.rnd, "delivery")), nil)
		if c.own(r) && method == "POST" {
			c.w.add("delivery", r.Str("id"))
		}
	}
}

func isoWebhookDrivers() map[string]func(isoCtx) {
	hooks := func(app, id string) string { return isoApps + app + "/webhooks" + strings.TrimSuffix("/"+id, "/") }
	sub := func(verb string) func(app, id string) string {
		return func(app, id string) string { return isoApps + app + "/webhooks/" + id + "/" + verb }
	}
	// onSub posts verb to one of w's subscriptions.
	onSub := func(verb string) func(isoCtx) { return isoOnApp("POST", "subscription", sub(verb), nil, nil) }
	const deliveries = "/openapi/v1/webhooks/deliveries"
	return map[string]func(isoCtx){
		"POST " + isoApps + "{clientId}/webhooks": func(c isoCtx) {
			if !c.foreign {
				if len(c.w.live["subscription"]) < 3 {
					c.own(c.newSubscription())
					return
				}
				r := c.console("POST", isoApps+c.w.tn.ClientID+"/webhooks",
					map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"task.created"}})
				c.own(r)
				c.console("DELETE", isoApps+c.w.tn.ClientID+"/webhooks/"+r.Str("id"), nil)
				return
			}
			app := c.x.tn.ClientID
			c.notFound(c.console("POST", isoApps+app+"/webhooks",
				map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"*"}}, app))
		},
		"GET " + isoApps + "{clientId}/webhooks": isoOnApp("GET", "", hooks, nil, nil),
		"DELETE " + isoApps + "{clientId}/webhooks/{subId}": isoOnApp("DELETE", "subscription", hooks, nil,
			func(c isoCtx) string {
				return c.console("POST", isoApps+c.w.tn.ClientID+"/webhooks",
					map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"note.created"}}).Str("id")
			}),
		"PATCH " + isoApps + "{clientId}/webhooks/{subId}": isoOnApp("PATCH", "subscription", hooks,
			func(c isoCtx) any {
				if c.s.rnd.IntN(2) == 0 {
					return map[string]any{"maxPerSecond": nil}
				}
				return map[string]any{"maxPerSecond": 1000}
			}, nil),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/disable": onSub("disable"),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/enable":  onSub("enable"),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/test":    onSub("test"),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/rotate-secret": isoOnApp("POST", "subscription",
			sub("rotate-secret"), func(c isoCtx) any {
				return map[string]any{"graceSeconds": 60}
			}, nil),
		"GET " + deliveries: isoList(deliveries, func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"subscriptionId": c.w.pick(c.s.rnd, "subscription")},
				{"eventType": "task.created"}, {"status": "SUCCEEDED"},
				{"since": "2020-01-01T00:00:00Z"}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"subscriptionId": c.x.pick(c.s.rnd, "subscription")}}
		}),
		"GET " + deliveries + "/{deliveryId}": isoDelivery("GET",
			func(id string) string { return deliveries + "/" + id }),
		"POST " + deliveries + "/{deliveryId}/replay": isoDelivery("POST",
			func(id string) string { return deliveries + "/" + id + "/replay" }),
		"POST " + deliveries + "/replay": func(c isoCtx) {
			body := map[string]any{"since": "2020-01-01T00:00:00Z"}
			if c.foreign {
				id := c.x.pick(c.s.rnd, "subscription")
				body["subscriptionId"] = id
				c.notFound(c.key("POST", deliveries+"/replay", body, id))
				return
			}
			body["subscriptionId"] = c.w.pick(c.s.rnd, "subscription")
			c.own(c.key("POST", deliveries+"/replay", body))
		},
	}
}

func isoConsoleDrivers() map[string]func(isoCtx) {
	app := func(sub string) func(app, id string) string {
		return func(app, _ string) string { return isoApps + app + sub }
	}
	key := func(sub string) func(app, id string) string {
		return func(app, id string) string { return isoApps + app + "/keys" + strings.TrimSuffix("/"+id, "/") + sub }
	}
	// Own calls use keys not yet revoked; other workspaces try any.
	spare := func(c isoCtx) string {
		if len(c.w.live["spare"]) == 0 {
			c.newKey()
		}
		return c.w.pick(c.s.rnd, "spare")
	}
	newApp := func(c isoCtx) *apitest.Response {
		return c.console("POST", "/openapi/v1/apps",
			map[string]any{"workspaceId": c.w.tn.WorkspaceID, "name": c.s.text(c.w), "scopes": []string{"tasks:read"}})
	}
	return map[string]func(isoCtx){
		// Search ranks by similarity, partial words and typos included, so a
		// word of another workspace may well find w's own rows: the answer
		// only has to hold to the property.
		"GET " + isoR + "search": func(c isoCtx) {
			if c.foreign {
				c.probed()
				c.get(isoR+"search", map[string]string{"q": c.x.mark}, c.x.mark)
				return
			}
			words := strings.Fields(oneOf(c, isoWords...))
			q := map[string]string{"q": oneOf(c, c.w.mark, words[0]+" "+words[len(words)-1], words[1])}
			if c.s.rnd.IntN(3) == 0 {
				q["types"] = oneOf(c, "task,risk", "project,note", "action-item,rrca")
			}
			c.own(c.get(isoR+"search", q))
		},
		"GET /openapi/v1/session": func(c isoCtx) { c.own(c.console("GET", "/openapi/v1/session", nil)) },
		"GET /openapi/v1/me":      func(c isoCtx) { c.own(c.key("GET", "/openapi/v1/me", nil)) },
		"GET /openapi/v1/apps":    func(c isoCtx) { c.own(c.console("GET", "/openapi/v1/apps", nil)) },
		"GET /openapi/v1/audit":   func(c isoCtx) { c.own(c.console("GET", "/openapi/v1/audit", nil)) },
		// The body's workspaceId must be the signed-in user's workspace;
		// another is not found (404), whether or not it exists.
		"POST /openapi/v1/apps": func(c isoCtx) {
			if c.foreign {
				c.refused(c.console("POST", "/openapi/v1/apps",
					map[string]any{"workspaceId": c.x.tn.WorkspaceID, "name": c.s.text(c.w), "scopes": []string{}},
					c.x.tn.WorkspaceID), 404, "NOT_FOUND")
				return
			}
			c.own(newApp(c))
		},
		"GET " + isoApps + "{clientId}": isoOnApp("GET", "", app(""), nil, nil),
		"PATCH " + isoApps + "{clientId}": isoOnApp("PATCH", "", app(""), func(c isoCtx) any {
			return map[string]any{"description": c.s.text(c.w)}
		}, nil),
		"DELETE " + isoApps + "{clientId}": func(c isoCtx) {
			if c.foreign {
				isoOnApp("DELETE", "", app(""), nil, nil)(c)
				return
			}
			c.own(c.console("DELETE", isoApps+newApp(c).Str("clientId"), nil))
		},
		"PATCH " + isoApps + "{clientId}/scopes": isoOnApp("PATCH", "", app("/scopes"), func(c isoCtx) any {
			return map[string]any{"scopes": apitest.AllScopes}
		}, nil),
		"POST " + isoApps + "{clientId}/secret/rotate": isoOnApp("POST", "", app("/secret/rotate"), nil, nil),
		"POST " + isoApps + "{clientId}/keys": func(c isoCtx) {
			if c.foreign {
				isoOnApp("POST", "", key(""),
					func(c isoCtx) any { return map[string]any{"scopes": []string{"tasks:read"}} }, nil)(c)
				return
			}
			c.own(c.newKey())
		},
		"GET " + isoApps + "{clientId}/keys": isoOnApp("GET", "", key(""), nil, nil),
		"DELETE " + isoApps + "{clientId}/keys/{keyId}": func(c isoCtx) {
			if c.foreign {
				isoOnApp("DELETE", "key", key(""), nil, nil)(c)
				return
			}
			id := spare(c)
			if c.own(c.console("DELETE", isoApps+c.w.tn.ClientID+"/keys/"+id, nil)) {
				c.w.drop("spare", id)
			}
		},
		"POST " + isoApps + "{clientId}/keys/{keyId}/regenerate": isoOnApp("POST", "key", key("/regenerate"), nil,
			spare),
		"PATCH " + isoApps + "{clientId}/keys/{keyId}/name": isoOnApp("PATCH", "key", key("/name"),
			func(c isoCtx) any {
				return map[string]any{"name": "spare " + c.w.mark}
			}, spare),
		"POST " + isoApps + "{clientId}/keys/{keyId}/renew": isoOnApp("POST", "key", key("/renew"),
			func(c isoCtx) any {
				return map[string]any{"expiresAt": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)}
			}, spare),
		// Five wrong user codes lock a user out for ten minutes, so each
		// workspace tries at most four of the others'.
		"POST /openapi/v1/oauth/device/approve": func(c isoCtx) {
			from, code := c.userCode()
			r := c.console("POST", "/openapi/v1/oauth/device/approve",
				map[string]any{"user_code": code, "action": oneOf(c, "approve", "deny")}, code)
			if from == c.w {
				c.own(r)
				return
			}
			c.notFound(r)
		},
	}
}
