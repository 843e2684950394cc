package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// AuditEntryView is one entry of a workspace's audit log.
type AuditEntryView struct {
	ID        string          `json:"id" example:"aud_01J9Z3Q8W5N6K2M4R7T8V9X0YZ"`
	At        time.Time       `json:"at" doc:"When the change's transaction began"`
	Actor     AuditActorView  `json:"actor"`
	Action    string          `json:"action" doc:"What happened, <noun>.<verb>" example:"key.revoked"`
	Target    AuditTargetView `json:"target"`
	IP        *string         `json:"ip" doc:"The address the request came from; null for a change made outside a request"`
	RequestID *string         `json:"requestId" doc:"The request's X-Request-Id; null for a change made outside a request"`
}

// AuditActorView is who made a change.
type AuditActorView struct {
	Type string `json:"type" enum:"user,app,operator" enumName:"AuditActorType" doc:"user: a console session; app: an API key or OAuth token of the app; operator: the admin API or pmapi's own process"`
	ID   string `json:"id" doc:"The user's id, the app's client id, or admin (the operator token) or system (pmapi itself)"`
}

// AuditTargetView is what a change happened to.
type AuditTargetView struct {
	Type string `json:"type" doc:"app, key, webhook, session, user, grant or workspace" example:"key"`
	ID   string `json:"id" doc:"Its id as the API shows it (a client id for an app)"`
}

// AuditList is a page of the audit log, newest first.
type AuditList PageOf[AuditEntryView]

// AuditQuery filters the audit log.
type AuditQuery struct {
	ListQuery
	Action string `query:"action" doc:"Only entries of this action"`
	Since  string `query:"since" format:"date-time" doc:"Only entries at or after this time (RFC 3339)"`
}

func auditView(e audit.Entry) AuditEntryView {
	return AuditEntryView{
		ID: pmapi.FormatID(audit.IDPrefix, e.ID), At: e.At, Action: e.Action,
		Actor:  AuditActorView{Type: e.Actor.Type, ID: e.Actor.ID},
		Target: AuditTargetView{Type: e.Target.Type, ID: e.Target.ID},
		IP:     e.IP, RequestID: e.RequestID,
	}
}

const auditDescription = "Every change to the workspace's credentials and configuration (apps, keys, " +
	"webhook subscriptions, sessions, OAuth grants, quotas, the operator's actions), newest first, each " +
	"written in the change's own transaction and kept for the event retention (PMAPI_EVENT_RETENTION, 30 days " +
	"by default). Filters: `action` (one of the actions listed in docs/operations.md) and `since`."

func (s *Server) auditOperations() []Operation {
	return []Operation{
		{
			Method: http.MethodGet, Path: "/openapi/v1/audit", ID: "listAudit", Tag: "Session", Auth: AuthSession,
			Summary: "The workspace's audit log", Description: auditDescription,
			Query: AuditQuery{}, Result: AuditList{}, Status: http.StatusOK,
			Handler: func(c *fiber.Ctx) error {
				res := resolutionOf(c)
				return s.listAudit(c, res.Shard, res.Workspace.ID)
			},
		},
		{
			Method: http.MethodGet, Path: "/admin/v1/workspaces/{workspaceId}/audit", ID: "adminListAudit",
			Tag: "Operator admin", Auth: AuthAdmin,
			Summary: "A workspace's audit log", Description: auditDescription,
			Query: AuditQuery{}, Result: AuditList{}, Status: http.StatusOK,
			Handler: func(c *fiber.Ctx) error {
				w, err := s.pathWorkspace(c)
				if err != nil {
					return err
				}
				shard, err := s.Directory.ShardOf(w)
				if err != nil {
					return err
				}
				return s.listAudit(c, shard, w.ID)
			},
		},
	}
}

// listAudit answers a page of workspace ws's audit log.
func (s *Server) listAudit(c *fiber.Ctx, shard *tenant.Shard, ws uuid.UUID) error {
	q, before, err := DecodeList[AuditQuery](c, "audit")
	if err != nil {
		return err
	}
	f := audit.Filter{Action: q.Action, Before: before, Limit: q.Limit + 1}
	if q.Action != "" && !audit.Known(q.Action) {
		return pmapi.Invalid("action", "action %q is not one the audit log records", q.Action).
			With("allowed", audit.Actions())
	}
	if q.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, q.Since)
		if err != nil {
			return pmapi.Invalid("since", "since must be an RFC 3339 time, such as 2026-01-02T15:04:05Z")
		}
		f.Since = &t
	}
	entries, err := audit.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page, next := Page("audit", entries, q.Limit, func(e audit.Entry) uuid.UUID { return e.ID })
	items := make([]AuditEntryView, len(page))
	for i, e := range page {
		items[i] = auditView(e)
	}
	return respond(c, http.StatusOK, AuditList{Items: items, NextCursor: next})
}

// operator is the origin of the admin API's changes: one operator token, so
// one operator.
const operator = "admin"

// origin records who the request's credentials are, for the audit log of
// the changes it makes (audit.WithOrigin).
func (s *Server) origin(c *fiber.Ctx) error {
	o := audit.Origin{IP: c.IP(), RequestID: requestID(c)}
	switch {
	case c.Locals(localUser) != nil:
		o.Actor = audit.Actor{Type: audit.ActorUser, ID: userOf(c).ID.String()}
	case c.Locals(localPrincipal) != nil:
		o.Actor = audit.Actor{Type: audit.ActorApp, ID: principalOf(c).ClientID}
	default:
		o.Actor = audit.Actor{Type: audit.ActorOperator, ID: operator}
	}
	c.SetUserContext(audit.WithOrigin(c.UserContext(), o))
	return c.Next()
}

// asApp is the context of a change an OAuth client makes with its own
// credentials (the token endpoints, which take no API credentials).
func asApp(c *fiber.Ctx, clientID string) context.Context {
	return audit.WithOrigin(c.UserContext(), audit.Origin{
		Actor: audit.Actor{Type: audit.ActorApp, ID: clientID}, IP: c.IP(), RequestID: requestID(c),
	})
}
