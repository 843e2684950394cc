package api

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant/usage"
)

// UsageQuery is the span of days a usage read covers.
type UsageQuery struct {
	From string `query:"from" format:"date" doc:"First UTC day (YYYY-MM-DD), included; default: 30 days before to"`
	To   string `query:"to" format:"date" doc:"Last UTC day (YYYY-MM-DD), included; default: today"`
}

// UsageItem is what one app (or the workspace itself) used on one UTC day.
type UsageItem struct {
	Date             string  `json:"date" format:"date" doc:"The UTC day"`
	ClientID         *string `json:"clientId" doc:"The app's client id; null for what belongs to the workspace as a whole (events)"`
	Requests2xx      int64   `json:"requests2xx" doc:"Requests answered below 400 (successes, redirects, 304s)"`
	Requests4xx      int64   `json:"requests4xx" doc:"Requests answered 4xx, rate-limited ones included"`
	Requests5xx      int64   `json:"requests5xx" doc:"Requests answered 5xx"`
	Events           int64   `json:"events" doc:"Change events fanned out to webhooks"`
	Deliveries       int64   `json:"deliveries" doc:"Webhook delivery attempts to the app's subscriptions"`
	DeliveriesFailed int64   `json:"deliveriesFailed" doc:"Of those attempts, the ones that got no 2xx answer"`
}

// UsageList is a workspace's usage, by day then client id.
type UsageList struct {
	Items []UsageItem `json:"items"`
}

// maxUsageDays bounds one read: a year and a day.
const maxUsageDays = 366

func (s *Server) adminUsageOperation() Operation {
	return Operation{
		Method:  http.MethodGet,
		Path:    "/admin/v1/workspaces/{workspaceId}/usage",
		ID:      "adminWorkspaceUsage",
		Tag:     "Operator admin",
		Auth:    AuthAdmin,
		Summary: "A workspace's usage per app and UTC day",
		Description: "Requests by status class, events and webhook deliveries, per app (client id) and UTC day, " +
			"from `from` to `to` (both included, at most 366 days). Each server process counts in memory and " +
			"adds its counts to these rows once a minute (PMAPI_USAGE_FLUSH) and when it stops: the last minute " +
			"is not here yet, and a process that crashes loses the minute it had not written. " +
			"Days without use have no item.",
		Query:   UsageQuery{},
		Result:  UsageList{},
		Status:  http.StatusOK,
		Handler: s.adminWorkspaceUsage,
	}
}

func (s *Server) adminWorkspaceUsage(c *fiber.Ctx) error {
	q, err := DecodeQuery[UsageQuery](c)
	if err != nil {
		return err
	}
	from, to, err := usageSpan(q, time.Now())
	if err != nil {
		return err
	}
	w, err := s.pathWorkspace(c)
	if err != nil {
		return err
	}
	shard, err := s.Directory.ShardOf(w)
	if err != nil {
		return err
	}
	days, err := usage.Read(c.UserContext(), shard, w.ID, from, to)
	if err != nil {
		return err
	}
	out := UsageList{Items: make([]UsageItem, 0, len(days))}
	for _, d := range days {
		item := UsageItem{Date: d.Date.Format(time.DateOnly), Requests2xx: d.Requests2xx,
			Requests4xx: d.Requests4xx, Requests5xx: d.Requests5xx, Events: d.Events,
			Deliveries: d.Deliveries, DeliveriesFailed: d.DeliveriesFailed}
		if d.ClientID != "" {
			item.ClientID = &d.ClientID
		}
		out.Items = append(out.Items, item)
	}
	return respond(c, http.StatusOK, out)
}

// usageSpan reads the query's days: to defaults to today (UTC), from to 30
// days before to.
func usageSpan(q UsageQuery, now time.Time) (from, to time.Time, err error) {
	to = now.UTC().Truncate(24 * time.Hour)
	if q.To != "" {
		if to, err = time.Parse(time.DateOnly, q.To); err != nil {
			return from, to, pmapi.Invalid("to", "to must be a date as YYYY-MM-DD")
		}
	}
	from = to.AddDate(0, 0, -30)
	if q.From != "" {
		if from, err = time.Parse(time.DateOnly, q.From); err != nil {
			return from, to, pmapi.Invalid("from", "from must be a date as YYYY-MM-DD")
		}
	}
	switch {
	case from.After(to):
		return from, to, pmapi.Invalid("from", "from (%s) is after to (%s)", q.From, to.Format(time.DateOnly))
	case to.Sub(from) > maxUsageDays*24*time.Hour:
		return from, to, pmapi.Invalid("from", "a usage read spans at most %d days", maxUsageDays)
	}
	return from, to, nil
}
