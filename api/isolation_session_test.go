package api_test

// The drivers of the console's session routes added for sign-in and the
// developer console: an app's deliveries read and replayed with the session,
// the pending device authorization, and sign-out.
func init() {
	for k, v := range isoSessionDeliveryDrivers() {
		isoDrivers[k] = v
	}
	isoSkipped["DELETE /openapi/v1/session"] = "ends the caller's own session and takes no id; TestEndSession"
}

func isoSessionDeliveryDrivers() map[string]func(isoCtx) {
	at := func(sub string) func(app, id string) string {
		return func(app, id string) string {
			if id != "" {
				id = "/" + id
			}
			return isoApps + app + "/deliveries" + id + sub
		}
	}
	const pending = "/openapi/v1/oauth/device/pending"
	return map[string]func(isoCtx){
		"GET " + isoApps + "{clientId}/deliveries":              isoOnApp("GET", "", at(""), nil, nil),
		"GET " + isoApps + "{clientId}/deliveries/{deliveryId}": isoOnApp("GET", "delivery", at(""), nil, nil),
		"POST " + isoApps + "{clientId}/deliveries/{deliveryId}/replay": isoOnApp(
			"POST",
			"delivery",
			at("/replay"),
			nil,
			nil,
		),
		"POST " + isoApps + "{clientId}/deliveries/replay": func(c isoCtx) {
			body := map[string]any{"since": "2020-01-01T00:00:00Z"}
			if c.foreign {
				app, sub := c.x.tn.ClientID, c.w.pick(c.s.rnd, "subscription")
				if c.s.rnd.IntN(2) == 0 {
					app, sub = c.w.tn.ClientID, c.x.pick(c.s.rnd, "subscription")
				}
				body["subscriptionId"] = sub
				c.notFound(c.console("POST", isoApps+app+"/deliveries/replay", body, app, sub))
				return
			}
			body["subscriptionId"] = c.w.pick(c.s.rnd, "subscription")
			c.own(c.console("POST", isoApps+c.w.tn.ClientID+"/deliveries/replay", body))
		},
		// Wrong codes count against the user with the approvals' (five lock
		// it out), so foreign tries share their budget.
		"GET " + pending: func(c isoCtx) {
			from, code := c.userCode()
			r := c.console("GET", pending+"?user_code="+code, nil, code)
			if from == c.w {
				c.own(r)
				return
			}
			c.notFound(r)
		},
	}
}
