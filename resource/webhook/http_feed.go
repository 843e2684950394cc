package webhook

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
)

// ScopeEvents is the event feed's scope; each event also needs the read scope
// of its resource.
const ScopeEvents = "events:read"

// FeedListQuery documents and decodes the event feed's parameters.
type FeedListQuery struct {
	After     string     `query:"after" doc:"nextCursor of the previous read; absent: from the oldest retained event"`
	Types     string     `query:"types" doc:"Comma-separated event types to list; absent: every type"`
	ProjectID *uuid.UUID `query:"projectId" prefix:"prj_" noun:"project" doc:"Only the events of this project"`
	Limit     int        `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"At most this many events, 1 to 200"`
}

// FeedItem is one event of the feed.
type FeedItem struct {
	ID         string          `json:"id" example:"evn_01JD8X3Q4ZA2B3C4D5E6F7G8H9" doc:"The event's id: the eventId of its webhook deliveries"`
	Type       string          `json:"type" example:"task.status_changed"`
	OccurredAt time.Time       `json:"occurredAt" doc:"When the change was written"`
	Data       json.RawMessage `json:"data" doc:"The event's payload, as in its webhook deliveries; x-webhooks names its schema for each type"`
}

// FeedView is one read of the event feed.
type FeedView struct {
	Items      []FeedItem `json:"items" doc:"Events in the order their transactions committed"`
	NextCursor string     `json:"nextCursor" doc:"The position after the last item, or the request's own when nothing is newer: always present; read again with it as after"`
	HasMore    bool       `json:"hasMore" doc:"Whether more events are available now"`
}

// SchemaName names the feed's page in the document.
func (FeedView) SchemaName() string { return "EventFeed" }

// feedOperations is the event feed: a key with events:read reads the events of
// the resources it may read, in commit order, from a cursor it keeps.
func (h handlers) feedOperations(readScopes map[string]string) []api.Operation {
	return []api.Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/events", ID: "listEvents", Tag: "Webhooks",
		Auth: api.AuthKey, Scope: ScopeEvents, Status: http.StatusOK,
		Fails:   []pmapi.Code{pmapi.CodeCursorExpired},
		Summary: "Every event of the workspace since a cursor, exactly once and in commit order (catch up after downtime)",
		Query:   FeedListQuery{}, Result: FeedView{}, Handler: h.listEvents(readScopes),
	}}
}

func (h handlers) listEvents(readScopes map[string]string) fiber.Handler {
	all := make([]string, 0, len(readScopes))
	for t := range readScopes {
		all = append(all, t)
	}
	slices.Sort(all)
	return func(c *fiber.Ctx) error {
		q, err := api.DecodeQuery[FeedListQuery](c)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		fq := FeedQuery{Limit: q.Limit}
		if q.Limit == 0 {
			fq.Limit = 50
		}
		if c.Context().QueryArgs().Has("after") {
			if fq.After, err = ParseFeedCursor(ws, q.After); err != nil {
				return err
			}
			fq.Given = true
		}
		wanted := all
		if q.Types != "" {
			wanted = nil
			for t := range strings.SplitSeq(q.Types, ",") {
				t = strings.TrimSpace(t)
				if _, ok := readScopes[t]; !ok {
					return pmapi.Invalid("types", "unknown event type %q; GET /openapi/v1/webhooks/event-types lists them", t)
				}
				wanted = append(wanted, t)
			}
		}
		held := api.Principal(c).Scopes
		fq.Types = []string{}
		for _, t := range wanted {
			if s := readScopes[t]; s == "" || held.Has(authz.Scope(s)) {
				fq.Types = append(fq.Types, t)
			}
		}
		if q.ProjectID != nil {
			fq.Project = pmapi.FormatID(pmapi.ProjectIDPrefix, *q.ProjectID)
		}
		page, err := h.webhooks.Feed(c.UserContext(), shard, ws, fq)
		if err != nil {
			return err
		}
		out := FeedView{Items: make([]FeedItem, len(page.Events)), NextCursor: FeedCursor(ws, page.Next),
			HasMore: page.HasMore}
		for i, e := range page.Events {
			out.Items[i] = FeedItem{ID: pmapi.FormatID(EventPrefix, e.ID), Type: e.Type,
				OccurredAt: e.OccurredAt.UTC(), Data: e.Data}
		}
		return api.OK(c, out)
	}
}
