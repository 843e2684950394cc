package webhook

import (
	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/resource/internal/route"
)

// An app's deliveries for its workspace's console session: the same reads
// and replays as the key routes of http.go (which serve the calling app
// itself), by the same handlers, for the app named in the path. The
// developer console shows a delivery's attempt log and replays from these; an
// app of another workspace is 404, as any id of another workspace.

func (h handlers) consoleDeliveryOperations() []api.Operation {
	apps := route.Set{Tag: "Webhooks", Base: "/openapi/v1/apps/{clientId}/deliveries", Session: true}
	return apps.Ops(h.deliveryOperations(pathApp,
		named{"listAppDeliveries", "An app's deliveries, newest first, for its workspace's console"},
		named{"getAppDelivery", "One of an app's deliveries with its attempt log, for its workspace's console"},
		named{"replayAppDelivery", "Deliver one of an app's events again as a new delivery (replayOf names the original)"},
		named{"replayAppFailedDeliveries",
			"Replay the DEAD or cancelled deliveries of one of an app's subscriptions since a time"}))
}

// pathApp is the session's workspace and the path's app, which must be one of
// its apps.
func pathApp(c *fiber.Ctx) (anApp, error) {
	res := api.Console(c)
	clientID := c.Params("clientId")
	if _, err := authz.GetApp(c.UserContext(), res.Shard, res.Workspace.ID, clientID); err != nil {
		return anApp{}, err
	}
	return anApp{res.Shard, res.Workspace.ID, clientID}, nil
}
