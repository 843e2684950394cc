package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// DeliveryListQuery documents the delivery list's parameters.
type DeliveryListQuery struct {
	ListQuery
	SubscriptionID string `query:"subscriptionId"`
	Status         string `query:"status" enum:"PENDING,RETRYING,SUCCEEDED,DEAD,CANCELLED"`
	EventType      string `query:"eventType"`
	Since          string `query:"since" format:"date-time" doc:"Deliveries created at or after"`
}

func (s *Server) webhookOperations() []Operation {
	const tag = "Webhooks"
	subs := "/openapi/v1/apps/{clientId}/webhooks"
	one := subs + "/{subId}"
	deliveries := "/openapi/v1/webhooks/deliveries"
	return []Operation{
		{Method: http.MethodPost, Path: subs, ID: "createWebhook", Tag: tag, Auth: AuthSession, Idempotent: true, SecretField: "secret",
			Summary: "Subscribe an HTTPS endpoint to events; the signing secret is returned once", Body: webhook.CreateRequest{},
			Result: webhook.SubscriptionCreated{}, Status: http.StatusCreated, Handler: s.createWebhook},
		{Method: http.MethodGet, Path: subs, ID: "listWebhooks", Tag: tag, Auth: AuthSession,
			Summary: "The app's subscriptions (never their secrets)", Result: webhook.SubscriptionList{}, Status: http.StatusOK, Handler: s.listWebhooks},
		{Method: http.MethodDelete, Path: one, ID: "deleteWebhook", Tag: tag, Auth: AuthSession,
			Summary: "Stop a subscription at once (pending retries are cancelled); the row stays, DISABLED", Result: webhook.SubscriptionView{},
			Status: http.StatusOK, Handler: s.setWebhookStatus("DISABLED", "deleted")},
		{Method: http.MethodPost, Path: one + "/disable", ID: "disableWebhook", Tag: tag, Auth: AuthSession,
			Summary: "Disable a subscription (as delete)", Result: webhook.SubscriptionView{}, Status: http.StatusOK, Handler: s.setWebhookStatus("DISABLED", "disabled by a user")},
		{Method: http.MethodPost, Path: one + "/enable", ID: "enableWebhook", Tag: tag, Auth: AuthSession,
			Summary: "Enable a disabled subscription", Result: webhook.SubscriptionView{}, Status: http.StatusOK, Handler: s.setWebhookStatus("ACTIVE", "")},
		{Method: http.MethodPost, Path: one + "/test", ID: "testWebhook", Tag: tag, Auth: AuthSession,
			Summary: "Send a webhook.test event now and report the endpoint's answer", Result: webhook.TestResult{}, Status: http.StatusCreated, Handler: s.testWebhook},
		{Method: http.MethodPost, Path: one + "/rotate-secret", ID: "rotateWebhookSecret", Tag: tag, Auth: AuthSession,
			Summary: "New signing secret (returned once); the old one keeps signing alongside for the grace period", Body: webhook.RotateRequest{},
			Result: webhook.SecretRotated{}, Status: http.StatusCreated, Handler: s.rotateWebhookSecret},
		{Method: http.MethodGet, Path: deliveries, ID: "listDeliveries", Tag: tag, Auth: AuthKey, Scope: "webhooks:read",
			Summary: "The calling app's deliveries, newest first", Query: DeliveryListQuery{}, Result: webhook.DeliveryList{}, Status: http.StatusOK, Handler: s.listDeliveries},
		{Method: http.MethodGet, Path: deliveries + "/{deliveryId}", ID: "getDelivery", Tag: tag, Auth: AuthKey, Scope: "webhooks:read",
			Summary: "One delivery with its attempt log", Result: webhook.DeliveryDetail{}, Status: http.StatusOK, Handler: s.getDelivery},
		{Method: http.MethodPost, Path: deliveries + "/{deliveryId}/replay", ID: "replayDelivery", Tag: tag, Auth: AuthKey, Scope: "webhooks:write",
			Summary: "Deliver the same event again as a new delivery (replayOf names the original)", Result: webhook.DeliveryView{},
			Status: http.StatusCreated, Handler: s.replayDelivery},
		{Method: http.MethodPost, Path: deliveries + "/replay", ID: "replayFailedDeliveries", Tag: tag, Auth: AuthKey, Scope: "webhooks:write",
			Summary: "Replay every DEAD or cancelled delivery of a subscription since a time", Body: webhook.BulkReplayRequest{},
			Result: webhook.BulkReplayed{}, Status: http.StatusCreated, Handler: s.replayFailed},
	}
}

func (s *Server) createWebhook(c *fiber.Ctx) error {
	req, err := decodeBody[webhook.CreateRequest](c)
	if err != nil {
		return err
	}
	if len(req.Events) == 0 {
		return pmapi.Invalid("events", "events must name at least one event type, or \"*\"")
	}
	known := map[string]bool{"*": true}
	for _, t := range eventTypes() {
		known[t.Name] = true
	}
	for _, e := range req.Events {
		if !known[e] {
			return pmapi.Invalid("events", "unknown event type %q; GET /openapi/v1/webhooks/event-types lists them", e)
		}
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 5*time.Second)
	defer cancel()
	u, err := webhook.CheckURL(ctx, req.URL, s.Resolver, s.WebhookAllowLoopback)
	if err != nil {
		return err
	}
	res := resolutionOf(c)
	sub, secret, err := s.webhooks.Create(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), u.String(), slices.Compact(slices.Sorted(slices.Values(req.Events))))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return respond(c, http.StatusCreated, webhook.SubscriptionCreated{SubscriptionView: webhook.ToView(sub), Secret: secret})
}

func (s *Server) listWebhooks(c *fiber.Ctx) error {
	res := resolutionOf(c)
	subs, err := s.webhooks.List(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"))
	if err != nil {
		return err
	}
	out := webhook.SubscriptionList{Items: []webhook.SubscriptionView{}}
	for _, sub := range subs {
		out.Items = append(out.Items, webhook.ToView(sub))
	}
	return respond(c, http.StatusOK, out)
}

func subPath(c *fiber.Ctx) (uuid.UUID, error) {
	return pmapi.ParseID(webhook.SubscriptionPrefix, c.Params("subId"), "subscription")
}

func (s *Server) setWebhookStatus(status, reason string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := subPath(c)
		if err != nil {
			return err
		}
		res := resolutionOf(c)
		sub, err := s.webhooks.SetStatus(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), id, status, reason)
		if err != nil {
			return err
		}
		return respond(c, http.StatusOK, webhook.ToView(sub))
	}
}

func (s *Server) testWebhook(c *fiber.Ctx) error {
	id, err := subPath(c)
	if err != nil {
		return err
	}
	res := resolutionOf(c)
	ctx := c.UserContext()
	d, sub, err := s.webhooks.NewTestDelivery(ctx, res.Shard, res.Workspace.ID, c.Params("clientId"), id)
	if err != nil {
		return err
	}
	result, err := jobs.Attempt(ctx, s.webhooks, s.WebhookSender, d, sub)
	if err != nil {
		return err
	}
	o := webhook.Outcome{Attempt: 1, Result: result, Status: "SUCCEEDED"}
	if !result.OK() {
		o.Status = "DEAD"
	}
	if _, err := s.webhooks.Record(ctx, res.Shard, res.Workspace.ID, d, o); err != nil {
		return err
	}
	out := webhook.TestResult{Delivered: result.OK(), Status: result.Status, DeliveryID: pmapi.FormatID(webhook.DeliveryPrefix, d.ID)}
	if result.Err != nil {
		msg := result.Err.Error()
		out.Error = &msg
	}
	return respond(c, http.StatusCreated, out)
}

func (s *Server) rotateWebhookSecret(c *fiber.Ctx) error {
	id, err := subPath(c)
	if err != nil {
		return err
	}
	req, err := decodeOptionalBody[webhook.RotateRequest](c)
	if err != nil {
		return err
	}
	grace := 24 * time.Hour
	if req.GraceSeconds != nil {
		if *req.GraceSeconds < 0 || *req.GraceSeconds > 7*24*3600 {
			return pmapi.Invalid("graceSeconds", "graceSeconds must be from 0 to 604800")
		}
		grace = time.Duration(*req.GraceSeconds) * time.Second
	}
	res := resolutionOf(c)
	sub, secret, err := s.webhooks.Rotate(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), id, grace)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return respond(c, http.StatusCreated, webhook.SecretRotated{SubscriptionView: webhook.ToView(sub), Secret: secret})
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	p := principalOf(c)
	f := webhook.DeliveryFilter{ClientID: p.ClientID}
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if raw := c.Query("subscriptionId"); raw != "" {
		id, err := pmapi.ParseID(webhook.SubscriptionPrefix, raw, "subscription")
		if err != nil {
			return pmapi.Invalid("subscriptionId", "subscriptionId must be a subscription id (whk_...)")
		}
		f.SubscriptionID = &id
	}
	if f.Status, err = queryEnum(c, "status", "PENDING", "RETRYING", "SUCCEEDED", "DEAD", "CANCELLED"); err != nil {
		return err
	}
	if f.Since, err = queryTime(c, "since"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "deliveries"); err != nil {
		return err
	}
	f.EventType = c.Query("eventType")
	limit := f.Limit
	f.Limit++
	items, err := s.webhooks.Deliveries(c.UserContext(), p.Shard, p.Workspace.ID, f)
	if err != nil {
		return err
	}
	page := webhook.DeliveryList{Items: []webhook.DeliveryView{}, NextCursor: nextCursor("deliveries", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, d := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, webhook.ToDeliveryView(d))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) getDelivery(c *fiber.Ctx) error {
	id, err := pmapi.ParseID(webhook.DeliveryPrefix, c.Params("deliveryId"), "delivery")
	if err != nil {
		return err
	}
	p := principalOf(c)
	d, attempts, err := s.webhooks.Detail(c.UserContext(), p.Shard, p.Workspace.ID, p.ClientID, id)
	if err != nil {
		return err
	}
	out := webhook.DeliveryDetail{DeliveryView: webhook.ToDeliveryView(d), Attempts: attempts}
	if out.Attempts == nil {
		out.Attempts = []webhook.AttemptView{}
	}
	if err := jsonUnmarshal(d.Data, &out.Data); err != nil {
		return err
	}
	return respond(c, http.StatusOK, out)
}

func (s *Server) replayDelivery(c *fiber.Ctx) error {
	id, err := pmapi.ParseID(webhook.DeliveryPrefix, c.Params("deliveryId"), "delivery")
	if err != nil {
		return err
	}
	p := principalOf(c)
	ds, err := s.webhooks.Replay(c.UserContext(), p.Shard, p.Workspace.ID, p.ClientID, []uuid.UUID{id})
	if err != nil {
		return err
	}
	return respond(c, http.StatusCreated, webhook.ToDeliveryView(ds[0]))
}

func (s *Server) replayFailed(c *fiber.Ctx) error {
	req, err := decodeBody[webhook.BulkReplayRequest](c)
	if err != nil {
		return err
	}
	sub, err := pmapi.ParseID(webhook.SubscriptionPrefix, req.SubscriptionID, "subscription")
	if err != nil {
		return err
	}
	p := principalOf(c)
	ctx := c.UserContext()
	ids, err := s.webhooks.FailedSince(ctx, p.Shard, p.Workspace.ID, p.ClientID, sub, req.Since)
	if err != nil {
		return err
	}
	out := webhook.BulkReplayed{Items: []webhook.DeliveryView{}}
	if len(ids) > 0 {
		ds, err := s.webhooks.Replay(ctx, p.Shard, p.Workspace.ID, p.ClientID, ids)
		if err != nil {
			return err
		}
		for _, d := range ds {
			out.Items = append(out.Items, webhook.ToDeliveryView(d))
		}
	}
	out.Count = len(out.Items)
	return respond(c, http.StatusCreated, out)
}
