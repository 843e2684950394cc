package api_test

import "github.com/pmapi/pmapi/internal/testkit/apitest"

// The drivers of an app's own subscription routes (its key manages its
// subscriptions) and of the console's read of one subscription: another
// workspace's subscription is 404 on both, and a project filter naming
// another workspace's project is refused as no project of the caller's.
func init() {
	for k, v := range isoOwnSubscriptionDrivers() {
		isoDrivers[k] = v
	}
}

func isoOwnSubscriptionDrivers() map[string]func(isoCtx) {
	const subs = "/openapi/v1/webhooks/subscriptions"
	at := func(verb string) func(id string) string {
		return func(id string) string { return subs + "/" + id + verb }
	}
	// onSub calls method on one of w's subscriptions with the key, or on one
	// of x's (404).
	onSub := func(method string, path func(id string) string, body func(c isoCtx) any) func(isoCtx) {
		return func(c isoCtx) {
			var b any
			if body != nil {
				b = body(c)
			}
			if c.foreign {
				id := c.x.pick(c.s.rnd, "subscription")
				c.notFound(c.key(method, path(id), b, id))
				return
			}
			c.own(c.key(method, path(c.w.pick(c.s.rnd, "subscription")), b))
		}
	}
	create := func(c isoCtx, events ...string) *apitest.Response {
		return c.key("POST", subs, map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": events,
			"projectIds": []string{c.w.pick(c.s.rnd, "project")}})
	}
	return map[string]func(isoCtx){
		"POST " + subs: func(c isoCtx) {
			if c.foreign {
				id := c.x.pick(c.s.rnd, "project")
				c.refused(c.key("POST", subs, map[string]any{"url": c.s.hook + "/" + c.w.mark,
					"events": []string{"*"}, "projectIds": []string{id}}, id), 400, "VALIDATION_FAILED")
				return
			}
			r := create(c, "task.created")
			if c.own(r) {
				c.key("DELETE", subs+"/"+r.Str("id"), nil)
			}
		},
		"GET " + subs: func(c isoCtx) {
			if c.foreign {
				c.probed()
				c.key("GET", subs, nil)
				return
			}
			c.own(c.key("GET", subs, nil))
		},
		"GET " + subs + "/{subId}": onSub("GET", at(""), nil),
		"PATCH " + subs + "/{subId}": onSub("PATCH", at(""), func(c isoCtx) any {
			return oneOf(c, map[string]any{"maxPerSecond": nil}, map[string]any{"projectIds": nil},
				map[string]any{"events": []string{"*"}})
		}),
		"DELETE " + subs + "/{subId}": func(c isoCtx) {
			if c.foreign {
				onSub("DELETE", at(""), nil)(c)
				return
			}
			c.own(c.key("DELETE", subs+"/"+create(c, "note.created").Str("id"), nil))
		},
		"POST " + subs + "/{subId}/disable": onSub("POST", at("/disable"), nil),
		"POST " + subs + "/{subId}/enable":  onSub("POST", at("/enable"), nil),
		"POST " + subs + "/{subId}/test":    onSub("POST", at("/test"), nil),
		"POST " + subs + "/{subId}/rotate-secret": onSub("POST", at("/rotate-secret"), func(isoCtx) any {
			return map[string]any{"graceSeconds": 60}
		}),
		"GET " + isoApps + "{clientId}/webhooks/{subId}": isoOnApp("GET", "subscription",
			func(app, id string) string { return isoApps + app + "/webhooks/" + id }, nil, nil),
	}
}
