package api_test

import (
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

const (
	isoR    = "/openapi/v1/resource/"
	isoRRCA = isoR + "rrca"
	isoApps = "/openapi/v1/apps/"
)

// The helpers below make what the drivers need, as w, and remember it.

func (c isoCtx) newProject() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"project/create", map[string]any{"name": c.s.text(w), "description": c.s.text(w),
		"ownerId": w.tn.UserID, "memberIds": []string{w.user2}})
	w.add("project", r.Str("id"))
	return r
}

func (c isoCtx) newTask() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"task/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"),
		"title": c.s.text(w), "description": c.s.text(w),
		"assigneeId": w.tn.UserID, "reporterId": w.user2, "priority": 1 + c.s.rnd.IntN(5),
		"dueDate": "2027-03-01T00:00:00Z"})
	w.add("task", r.Str("id"))
	return r
}

func (c isoCtx) newRisk() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"risk/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"),
		"title": c.s.text(w), "description": c.s.text(w), "ownerId": w.tn.UserID})
	w.add("risk", r.Str("id"))
	return r
}

func (c isoCtx) newNote() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"note/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"),
		"body": c.s.text(w)})
	w.add("note", r.Str("id"))
	return r
}

func (c isoCtx) newActionItem() *apitest.Response {
	w := c.w
	body := map[string]any{"title": c.s.text(w), "description": c.s.text(w), "ownerHint": "team " + w.mark,
		"dueDate": "2027-02-01T00:00:00Z"}
	if c.s.rnd.IntN(2) == 0 {
		body["projectId"] = w.pick(c.s.rnd, "project")
	}
	r := c.key("POST", isoR+"action-item/create", body)
	w.add("action-item", r.Str("id"))
	return r
}

func (c isoCtx) newRRCA() *apitest.Response {
	w := c.w
	r := c.key("POST", isoRRCA, map[string]any{"title": c.s.text(w), "problemStatement": c.s.text(w),
		"projectId": w.pick(c.s.rnd, "project")})
	w.add("rrca", r.Str("id"))
	return r
}

// newNode adds a node of kind to the analysis, under parent when given.
func (c isoCtx) newNode(rrca, kind, parent string) string {
	w := c.w
	body := map[string]any{"kind": kind, "text": c.s.text(w)}
	if parent != "" {
		body["parentId"] = parent
	}
	r := c.key("POST", isoRRCA+"/"+rrca+"/nodes", body)
	if id := r.Str("id"); id != "" {
		w.addNode(rrca, kind, id)
	}
	return r.Str("id")
}

func (c isoCtx) newCorrective() *apitest.Response {
	w := c.w
	rrca, root := w.pickNode(c.s.rnd, "ROOT_CAUSE")
	r := c.key("POST", isoRRCA+"/"+rrca+"/corrective-actions",
		map[string]any{"nodeId": root, "title": c.s.text(w), "ownerHint": "team " + w.mark})
	w.add("action-item", r.Str("actionItem.id"))
	return r
}

func (c isoCtx) newSubscription() *apitest.Response {
	w := c.w
	r := c.console("POST", isoApps+w.tn.ClientID+"/webhooks",
		map[string]any{"url": c.s.hook + "/" + w.mark, "events": []string{"*"}})
	w.add("subscription", r.Str("id"))
	return r
}

func (c isoCtx) newKey() *apitest.Response {
	w := c.w
	r := c.console("POST", isoApps+w.tn.ClientID+"/keys",
		map[string]any{"name": "spare " + w.mark, "scopes": []string{"tasks:read"}})
	w.add("key", r.Str("id"))
	w.add("spare", r.Str("id"))
	return r
}

// newDelivery sends the test event, which records a delivery.
func (c isoCtx) newDelivery() *apitest.Response {
	w := c.w
	sub := w.pick(c.s.rnd, "subscription")
	r := c.console("POST", isoApps+w.tn.ClientID+"/webhooks/"+sub+"/test", nil)
	w.add("delivery", r.Str("deliveryId"))
	return r
}

// userCode asks for a device code for w's app or, in foreign mode while w may
// still try codes of x (five wrong ones lock the user out, so at most four),
// for x's; it answers whose code it is and the user code.
func (c isoCtx) userCode() (from *isoWS, code string) {
	from = c.w
	if c.foreign && c.w.approves < 4 {
		from = c.x
		c.w.approves++
	}
	dc := c.s.env.Do(c.s.t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device/code",
		Body: map[string]any{"client_id": from.tn.ClientID}})
	c.s.check(from, "device code", dc)
	code, _ = dc.Body["user_code"].(string)
	return from, code
}
