package webhook

import (
	"encoding/json"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// An app's deliveries for its workspace's console session: the same reads
// and replays as the key routes of http.go (which serve the calling app
// itself), for the app named in the path. The developer console shows a
// delivery's attempt log and replays from these; an app of another workspace
// is 404, as any id of another workspace.

func (h handlers) consoleDeliveryOperations() []api.Operation {
	const tag = "Webhooks"
	base := "/openapi/v1/apps/{clientId}/deliveries"
	return []api.Operation{
		{Method: http.MethodGet, Path: base, ID: "listAppDeliveries", Tag: tag, Auth: api.AuthSession,
			Summary: "An app's deliveries, newest first, for its workspace's console", Query: DeliveryListQuery{},
			Result: DeliveryList{}, Status: http.StatusOK, Handler: h.listAppDeliveries},
		{Method: http.MethodGet, Path: base + "/{deliveryId}", ID: "getAppDelivery", Tag: tag, Auth: api.AuthSession,
			Summary: "One of an app's deliveries with its attempt log, for its workspace's console",
			Result:  DeliveryDetail{}, Status: http.StatusOK, Handler: h.getAppDelivery},
		{
			Method:  http.MethodPost,
			Path:    base + "/{deliveryId}/replay",
			ID:      "replayAppDelivery",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    api.AuthSession,
			Result:  DeliveryView{},
			Status:  http.StatusCreated,
			Handler: h.replayAppDelivery,
			Summary: "Deliver one of an app's events again as a new delivery (replayOf names the original)",
		},
		{
			Method:  http.MethodPost,
			Path:    base + "/replay",
			ID:      "replayAppFailedDeliveries",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    api.AuthSession,
			Body:    BulkReplayRequest{},
			Result:  BulkReplayed{},
			Status:  http.StatusCreated,
			Summary: "Replay the DEAD or cancelled deliveries of one of an app's subscriptions since a time",
			Handler: h.replayAppFailed,
		},
	}
}

// pathApp is the session's workspace and the path's app, which must be one of
// its apps.
func pathApp(c *fiber.Ctx) (*tenant.Shard, uuid.UUID, string, error) {
	res := api.Console(c)
	clientID := c.Params("clientId")
	if _, err := authz.GetApp(c.UserContext(), res.Shard, res.Workspace.ID, clientID); err != nil {
		return nil, uuid.Nil, "", err
	}
	return res.Shard, res.Workspace.ID, clientID, nil
}

func (h handlers) listAppDeliveries(c *fiber.Ctx) error {
	q, before, err := api.DecodeList[DeliveryListQuery](c, "deliveries")
	if err != nil {
		return err
	}
	shard, ws, clientID, err := pathApp(c)
	if err != nil {
		return err
	}
	f := DeliveryFilter{ClientID: clientID, SubscriptionID: q.SubscriptionID, Status: q.Status, EventType: q.EventType,
		Since: q.Since, Before: before, Limit: q.Limit + 1}
	items, err := h.webhooks.Deliveries(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	items, next := api.Page("deliveries", items, q.Limit, func(d Delivery) uuid.UUID { return d.ID })
	return api.OK(c, DeliveryList{Items: api.Views(items, ToDeliveryView), NextCursor: next})
}

func (h handlers) getAppDelivery(c *fiber.Ctx) error {
	id, err := pmapi.ParseID(DeliveryPrefix, c.Params("deliveryId"), "delivery")
	if err != nil {
		return err
	}
	shard, ws, clientID, err := pathApp(c)
	if err != nil {
		return err
	}
	d, attempts, err := h.webhooks.Detail(c.UserContext(), shard, ws, clientID, id)
	if err != nil {
		return err
	}
	out := DeliveryDetail{DeliveryView: ToDeliveryView(d), Attempts: attempts}
	if out.Attempts == nil {
		out.Attempts = []AttemptView{}
	}
	if err := json.Unmarshal(d.Data, &out.Data); err != nil {
		return err
	}
	return api.OK(c, out)
}

func (h handlers) replayAppDelivery(c *fiber.Ctx) error {
	id, err := pmapi.ParseID(DeliveryPrefix, c.Params("deliveryId"), "delivery")
	if err != nil {
		return err
	}
	shard, ws, clientID, err := pathApp(c)
	if err != nil {
		return err
	}
	ds, err := h.webhooks.Replay(c.UserContext(), shard, ws, clientID, []uuid.UUID{id})
	if err != nil {
		return err
	}
	return api.Created(c, ToDeliveryView(ds[0]))
}

func (h handlers) replayAppFailed(c *fiber.Ctx) error {
	req, err := api.DecodeBody[BulkReplayRequest](c)
	if err != nil {
		return err
	}
	sub, err := pmapi.ParseID(SubscriptionPrefix, req.SubscriptionID, "subscription")
	if err != nil {
		return err
	}
	shard, ws, clientID, err := pathApp(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	ids, err := h.webhooks.FailedSince(ctx, shard, ws, clientID, sub, req.Since, req.IncludeReplayed)
	if err != nil {
		return err
	}
	out := BulkReplayed{Items: []DeliveryView{}}
	if len(ids) > 0 {
		ds, err := h.webhooks.Replay(ctx, shard, ws, clientID, ids)
		if err != nil {
			return err
		}
		for _, d := range ds {
			out.Items = append(out.Items, ToDeliveryView(d))
		}
	}
	out.Count = len(out.Items)
	return api.Created(c, out)
}
