package webhook

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
)

// Subscriptions are managed on two sets of routes by the same handlers: the
// console session's, for any app of its workspace named in the path, and an
// app's own key's or token's (webhooks:read and webhooks:write), for that app
// alone (docs/decisions/webhooks.md, "Apps manage their own webhooks"). A
// subscription of another app, or of another workspace, is 404 on either.

// subHandlers serve the subscriptions of the app that app finds.
type subHandlers struct {
	handlers
	app appOf
}

// sessionApp is the console session's workspace and the path's app. It is
// not looked up here: every subscription statement names the app, so one of
// another workspace finds nothing, and a create checks that the app exists.
func sessionApp(c *fiber.Ctx) (anApp, error) {
	res := api.Console(c)
	return anApp{res.Shard, res.Workspace.ID, c.Params("clientId")}, nil
}

// operations are the subscription routes; noun names their operation ids
// (createWebhook, createWebhookSubscription) and app in the summaries whose
// subscriptions they serve.
func (h subHandlers) operations(noun, app string) []api.Operation {
	badURL := []pmapi.Code{pmapi.CodeInvalidWebhookURL, pmapi.CodeURLNotAllowed}
	return []api.Operation{
		{Method: http.MethodPost, Path: "", ID: "create" + noun, Fails: append(badURL, pmapi.CodeQuotaExceeded),
			Idempotent: true, SecretField: "secret",
			Summary: "Subscribe an HTTPS endpoint of " + app + " to events; the signing secret is returned once",
			Body:    CreateRequest{}, Result: SubscriptionCreated{}, Handler: h.createWebhook},
		{Method: http.MethodGet, Path: "", ID: "list" + noun + "s",
			Summary: "The subscriptions of " + app + " (never their secrets)",
			Query:   api.ListQuery{}, Result: SubscriptionList{}, Handler: h.listWebhooks},
		{Method: http.MethodGet, Path: "/{subId}", ID: "get" + noun,
			Summary: "One subscription of " + app + " (never its secret)",
			Result:  SubscriptionView{}, Handler: h.getWebhook},
		{Method: http.MethodPatch, Path: "/{subId}", ID: "update" + noun, Fails: badURL, Status: http.StatusOK,
			IfMatch: true,
			Summary: "Change a subscription of " + app + ": url, events, projectIds, maxPerSecond " +
				"(absent fields stay; null removes the filter or the cap)",
			Body: UpdateRequest{}, Result: SubscriptionView{}, Handler: h.updateWebhook},
		{Method: http.MethodDelete, Path: "/{subId}", ID: "delete" + noun, Status: http.StatusOK,
			Summary: "Stop a subscription of " + app + " at once (pending retries are cancelled); " +
				"the row stays, DISABLED",
			Result: SubscriptionView{}, Handler: h.setWebhookStatus("DISABLED", "deleted")},
		{Method: http.MethodPost, Path: "/{subId}/disable", ID: "disable" + noun, Status: http.StatusOK,
			Summary: "Disable a subscription of " + app + " (as delete)",
			Result:  SubscriptionView{}, Handler: h.setWebhookStatus("DISABLED", "disabled by a user")},
		{Method: http.MethodPost, Path: "/{subId}/enable", ID: "enable" + noun, Status: http.StatusOK,
			Fails:   []pmapi.Code{pmapi.CodeQuotaExceeded},
			Summary: "Enable a disabled subscription of " + app + " (within the workspace's webhooks quota)",
			Result:  SubscriptionView{}, Handler: h.setWebhookStatus("ACTIVE", "")},
		{Method: http.MethodPost, Path: "/{subId}/test", ID: "test" + noun,
			Summary: "Send a webhook.test event to a subscription of " + app + " now and report the endpoint's answer",
			Result:  TestResult{}, Handler: h.testWebhook},
		{Method: http.MethodPost, Path: "/{subId}/rotate-secret", ID: "rotate" + noun + "Secret", SecretField: "secret",
			Summary: "New signing secret of a subscription of " + app + " (returned once); " +
				"the old one keeps signing alongside for the grace period",
			Body: RotateRequest{}, Result: SecretRotated{}, Handler: h.rotateWebhookSecret},
	}
}

// pathSub is the subscription the path names and the app it must be of.
func (h subHandlers) pathSub(c *fiber.Ctx) (uuid.UUID, anApp, error) {
	id, err := subPath(c)
	if err != nil {
		return id, anApp{}, err
	}
	app, err := h.app(c)
	return id, app, err
}

// checkEvents checks a subscription's event types against the catalogue and
// returns them sorted, without repeats.
func (h handlers) checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, pmapi.Invalid("events", "events must name at least one event type, or \"*\"")
	}
	for _, e := range events {
		if !h.known[e] {
			return nil, pmapi.Invalid("events",
				"unknown event type %q; GET /openapi/v1/webhooks/event-types lists them", e)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(events))), nil
}

func (h subHandlers) getWebhook(c *fiber.Ctx) error {
	id, app, err := h.pathSub(c)
	if err != nil {
		return err
	}
	sub, err := h.webhooks.Get(c.UserContext(), app.shard, app.ws, app.clientID, id)
	if err != nil {
		return err
	}
	return api.OK(c, ToView(sub))
}

func (h subHandlers) updateWebhook(c *fiber.Ctx) error {
	id, app, err := h.pathSub(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[UpdateRequest](c)
	if err != nil {
		return err
	}
	ch, err := h.change(c.UserContext(), req, api.BodyFields(c))
	if err != nil {
		return err
	}
	sub, err := h.webhooks.Update(c.UserContext(), app.shard, app.ws, app.clientID, id, ch)
	if err != nil {
		return err
	}
	return api.OK(c, ToView(sub))
}

// change checks an update as a create is checked and says what it sets;
// given reports which fields the body holds, null ones included.
func (h subHandlers) change(ctx context.Context, req UpdateRequest, given func(string) bool) (Change, error) {
	var ch Change
	if !slices.ContainsFunc([]string{"url", "events", "projectIds", "maxPerSecond"}, given) {
		return ch, pmapi.Invalid("body", "name at least one field to change: url, events, projectIds, maxPerSecond")
	}
	if given("url") {
		if req.URL == nil {
			return ch, pmapi.Invalid("url", "url cannot be null")
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		u, err := checkSubscriptionURL(ctx, *req.URL, h.Resolver, h.AllowLoopback, h.LoopbackHTTP)
		if err != nil {
			return ch, err
		}
		s := u.String()
		ch.URL = &s
	}
	if given("events") {
		if req.Events == nil {
			return ch, pmapi.Invalid("events", "events cannot be null")
		}
		events, err := h.checkEvents(*req.Events)
		if err != nil {
			return ch, err
		}
		ch.Events = events
	}
	if given("projectIds") {
		projects, err := parseProjectFilter(req.ProjectIDs)
		if err != nil {
			return ch, err
		}
		ch.SetProjects, ch.Projects = true, projects
	}
	if given("maxPerSecond") {
		if err := validRate(req.MaxPerSecond); err != nil {
			return ch, err
		}
		ch.SetRate, ch.MaxPerSecond = true, req.MaxPerSecond
	}
	return ch, nil
}
