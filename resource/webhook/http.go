package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/tenant"
)

// The scopes of an app's own subscriptions and deliveries, for its key or
// token (the console session manages any app's subscriptions without them).
const (
	ScopeRead  = "webhooks:read"
	ScopeWrite = "webhooks:write"
)

// Attempter sends one delivery and reports the endpoint's answer (the job
// runner's, jobs.Attempt, which also counts it).
type Attempter func(ctx context.Context, store Store, sender *Sender, d Delivery, sub Subscription) (Result, error)

// HTTPDeps is what the webhook routes need besides the store.
type HTTPDeps struct {
	Store Store
	// Sender sends test deliveries; Attempt sends them through it.
	Sender  *Sender
	Attempt Attempter
	// Resolver resolves hosts at subscription time; AllowLoopback lets URLs
	// name loopback (tests, dev); LoopbackHTTP also takes plain http:// to a
	// loopback host (pmapi dev only, loopback.go).
	Resolver      Resolver
	AllowLoopback bool
	LoopbackHTTP  bool
}

// Resource registers webhook subscriptions and deliveries with the server. A
// subscription may name any registered event type (Catalog.Events).
func Resource(d HTTPDeps) api.Resource {
	return api.Resource{
		Name: "webhook", Scopes: []string{ScopeRead, ScopeWrite, ScopeEvents},
		Tables: []string{"webhook_subscriptions", "webhook_deliveries", "webhook_attempts",
			"event_log", "workspace_event_seq"},
		Events: EventTypes(), AppInUse: AppInUse,
		QuotaUse: &api.QuotaUse{Kind: quota.Webhooks, Used: CountActive},
		TagDoc:   "Subscriptions of HTTPS endpoints to events, their signed deliveries, replay and the event-type list.",
		Operations: func(cat api.Catalog) []api.Operation {
			known := map[string]bool{"*": true}
			for _, t := range cat.Events {
				known[t.Name] = true
			}
			h := handlers{HTTPDeps: d, webhooks: d.Store, known: known}
			ops := append(h.operations(), h.consoleDeliveryOperations()...)
			return append(ops, h.feedOperations(cat.ReadScopes)...)
		},
	}
}

type handlers struct {
	HTTPDeps
	webhooks Store
	known    map[string]bool // event types a subscription may name, and "*"
}

// DeliveryListQuery documents and decodes the delivery list's parameters.
type DeliveryListQuery struct {
	api.ListQuery
	SubscriptionID *uuid.UUID `query:"subscriptionId" prefix:"whk_" noun:"subscription"`
	Status         string     `query:"status" enum:"PENDING,RETRYING,SUCCEEDED,DEAD,CANCELLED"`
	EventType      string     `query:"eventType"`
	Since          *time.Time `query:"since" format:"date-time" doc:"Deliveries created at or after"`
}

func (h handlers) operations() []api.Operation {
	// An app's subscriptions are managed with the console session (any app
	// of the workspace, named in the path) and with the app's own key or
	// token (itself only, http_subscriptions.go); the deliveries are read and
	// replayed with the app's key.
	console := route.Set{Tag: "Webhooks", Base: "/openapi/v1/apps/{clientId}/webhooks", Session: true}
	own := route.Set{Tag: "Webhooks", Base: "/openapi/v1/webhooks/subscriptions", Read: ScopeRead, Write: ScopeWrite}
	deliveries := route.Set{Tag: "Webhooks", Base: "/openapi/v1/webhooks/deliveries",
		Read: ScopeRead, Write: ScopeWrite}
	ops := append(console.Ops(subHandlers{h, sessionApp}.operations("Webhook", "an app")),
		own.Ops(subHandlers{h, callerApp}.operations("WebhookSubscription", "the calling app"))...)
	return append(ops, deliveries.Ops(h.deliveryOperations(callerApp,
		named{"listDeliveries", "The calling app's deliveries, newest first"},
		named{"getDelivery", "One delivery with its attempt log"},
		named{"replayDelivery", "Deliver the same event again as a new delivery (replayOf names the original)"},
		named{"replayFailedDeliveries", "Replay the DEAD or cancelled deliveries of a subscription since a time, " +
			"each event once (includeReplayed: every one)"}))...)
}

// named is the id and the summary of one operation.
type named struct{ id, summary string }

// deliveryOperations are the delivery list, read, replay and bulk replay of
// the app appOf finds, named list, get, replay and replayFailed: the key's
// routes and the console's differ only in those names and in which app.
func (h handlers) deliveryOperations(appOf appOf, list, get, replay, replayFailed named) []api.Operation {
	return []api.Operation{
		{Method: http.MethodGet, Path: "", ID: list.id, Summary: list.summary,
			Query: DeliveryListQuery{}, Result: DeliveryList{}, Handler: h.listDeliveries(appOf)},
		{Method: http.MethodGet, Path: "/{deliveryId}", ID: get.id, Summary: get.summary,
			Result: DeliveryDetail{}, Handler: h.getDelivery(appOf)},
		{Method: http.MethodPost, Path: "/{deliveryId}/replay", ID: replay.id, Summary: replay.summary,
			Fails:  []pmapi.Code{pmapi.CodeConflict},
			Result: DeliveryView{}, Handler: h.replayDelivery(appOf)},
		{Method: http.MethodPost, Path: "/replay", ID: replayFailed.id, Summary: replayFailed.summary,
			Fails: []pmapi.Code{pmapi.CodeConflict},
			Body:  BulkReplayRequest{}, Result: BulkReplayed{}, Handler: h.replayFailed(appOf)},
	}
}

func (h subHandlers) createWebhook(c *fiber.Ctx) error {
	req, err := api.DecodeBody[CreateRequest](c)
	if err != nil {
		return err
	}
	events, err := h.checkEvents(req.Events)
	if err != nil {
		return err
	}
	if err := validRate(req.MaxPerSecond); err != nil {
		return err
	}
	projects, err := parseProjectFilter(req.ProjectIDs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 5*time.Second)
	defer cancel()
	u, err := checkSubscriptionURL(ctx, req.URL, h.Resolver, h.AllowLoopback, h.LoopbackHTTP)
	if err != nil {
		return err
	}
	app, err := h.app(c)
	if err != nil {
		return err
	}
	sub, secret, err := h.webhooks.Create(c.UserContext(), app.shard, app.ws, app.clientID,
		u.String(), events, req.MaxPerSecond, projects)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return api.Created(c, SubscriptionCreated{SubscriptionView: ToView(sub), Secret: secret})
}

// validRate checks a rate cap: 1 to 1000 deliveries a second.
func validRate(perSecond *int) error {
	if perSecond != nil && (*perSecond < 1 || *perSecond > 1000) {
		return pmapi.Invalid("maxPerSecond", "maxPerSecond must be from 1 to 1000")
	}
	return nil
}

func (h subHandlers) listWebhooks(c *fiber.Ctx) error {
	app, err := h.app(c)
	if err != nil {
		return err
	}
	subs, err := h.webhooks.List(c.UserContext(), app.shard, app.ws, app.clientID)
	if err != nil {
		return err
	}
	subs, next, err := api.PageIn(c, "webhooks", subs, func(s Subscription) string { return s.ID.String() })
	if err != nil {
		return err
	}
	return api.OK(c, SubscriptionList{Items: api.Views(subs, ToView), NextCursor: next})
}

func subPath(c *fiber.Ctx) (uuid.UUID, error) {
	return pmapi.ParseID(SubscriptionPrefix, c.Params("subId"), "subscription")
}

func (h subHandlers) setWebhookStatus(status, reason string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, app, err := h.pathSub(c)
		if err != nil {
			return err
		}
		sub, err := h.webhooks.SetStatus(c.UserContext(), app.shard, app.ws, app.clientID, id, status, reason)
		if err != nil {
			return err
		}
		return api.OK(c, ToView(sub))
	}
}

func (h subHandlers) testWebhook(c *fiber.Ctx) error {
	id, app, err := h.pathSub(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	d, sub, err := h.webhooks.NewTestDelivery(ctx, app.shard, app.ws, app.clientID, id)
	if err != nil {
		return err
	}
	at := time.Now()
	result, err := h.Attempt(ctx, h.webhooks, h.Sender, d, sub)
	if err != nil {
		return err
	}
	if err := h.webhooks.RecordTest(ctx, app.shard, app.ws, d, Sent{At: at, Result: result}); err != nil {
		return err
	}
	out := TestResult{Delivered: result.OK(), Status: result.Status, DeliveryID: pmapi.FormatID(DeliveryPrefix, d.ID)}
	if result.Err != nil {
		msg := result.Err.Error()
		out.Error = &msg
	}
	return api.Created(c, out)
}

func (h subHandlers) rotateWebhookSecret(c *fiber.Ctx) error {
	id, app, err := h.pathSub(c)
	if err != nil {
		return err
	}
	req, err := api.DecodeOptionalBody[RotateRequest](c)
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
	sub, secret, err := h.webhooks.Rotate(c.UserContext(), app.shard, app.ws, app.clientID, id, grace)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return api.Created(c, SecretRotated{SubscriptionView: ToView(sub), Secret: secret})
}

// anApp is the app whose deliveries a route reads and replays, in its
// workspace.
type anApp struct {
	shard    *tenant.Shard
	ws       uuid.UUID
	clientID string
}

// appOf finds that app: the calling one on a key's route (callerApp), the
// path's on the console's (pathApp, http_console.go). Its error is the
// route's.
type appOf func(c *fiber.Ctx) (anApp, error)

// callerApp is the app whose key calls.
func callerApp(c *fiber.Ctx) (anApp, error) {
	p := api.Principal(c)
	return anApp{p.Shard, p.Workspace.ID, p.ClientID}, nil
}

func (h handlers) listDeliveries(appOf appOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, before, err := api.DecodeList[DeliveryListQuery](c, "deliveries")
		if err != nil {
			return err
		}
		app, err := appOf(c)
		if err != nil {
			return err
		}
		f := DeliveryFilter{ClientID: app.clientID, SubscriptionID: q.SubscriptionID, Status: q.Status,
			EventType: q.EventType, Since: q.Since, Before: before, Limit: q.Limit + 1}
		items, err := h.webhooks.Deliveries(c.UserContext(), app.shard, app.ws, f)
		if err != nil {
			return err
		}
		items, next := api.Page("deliveries", items, q.Limit, func(d Delivery) uuid.UUID { return d.ID })
		return api.OK(c, DeliveryList{Items: api.Views(items, ToDeliveryView), NextCursor: next})
	}
}

// pathDelivery reads the delivery the path names, then the app it must be
// of.
func pathDelivery(c *fiber.Ctx, appOf appOf) (uuid.UUID, anApp, error) {
	id, err := pmapi.ParseID(DeliveryPrefix, c.Params("deliveryId"), "delivery")
	if err != nil {
		return id, anApp{}, err
	}
	app, err := appOf(c)
	return id, app, err
}

func (h handlers) getDelivery(appOf appOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, app, err := pathDelivery(c, appOf)
		if err != nil {
			return err
		}
		d, attempts, err := h.webhooks.Detail(c.UserContext(), app.shard, app.ws, app.clientID, id)
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
}

func (h handlers) replayDelivery(appOf appOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, app, err := pathDelivery(c, appOf)
		if err != nil {
			return err
		}
		ds, err := h.webhooks.Replay(c.UserContext(), app.shard, app.ws, app.clientID, []uuid.UUID{id})
		if err != nil {
			return err
		}
		return api.Created(c, ToDeliveryView(ds[0]))
	}
}

func (h handlers) replayFailed(appOf appOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[BulkReplayRequest](c)
		if err != nil {
			return err
		}
		sub, err := pmapi.ParseID(SubscriptionPrefix, req.SubscriptionID, "subscription")
		if err != nil {
			return err
		}
		app, err := appOf(c)
		if err != nil {
			return err
		}
		ctx := c.UserContext()
		ids, err := h.webhooks.FailedSince(ctx, app.shard, app.ws, app.clientID, sub, req.Since, req.IncludeReplayed)
		if err != nil {
			return err
		}
		out := BulkReplayed{Items: []DeliveryView{}}
		if len(ids) > 0 {
			ds, err := h.webhooks.Replay(ctx, app.shard, app.ws, app.clientID, ids)
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
}
