package api

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/tenant"
)

// QuotaUse counts, for the quotas' read, the rows of a resource that quota
// Kind limits in a workspace; the resource counts its own table.
type QuotaUse struct {
	Kind quota.Kind
	Used func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (int64, error)
}

// QuotasRequest sets every quota of a workspace at once; null (or absent) is
// unlimited.
type QuotasRequest struct {
	Apps             *int64 `json:"apps" minimum:"0" doc:"Apps of the workspace (any status); null: unlimited"`
	KeysPerApp       *int64 `json:"keysPerApp" minimum:"0" doc:"Live keys (neither revoked nor expired) of one app; null: unlimited"`
	Webhooks         *int64 `json:"webhooks" minimum:"0" doc:"Active webhook subscriptions of the workspace; null: unlimited"`
	RequestsPerMonth *int64 `json:"requestsPerMonth" minimum:"0" doc:"API requests a UTC month; stored and shown, not enforced yet; null: unlimited"`
}

// Validate refuses a negative or absurd limit.
func (r *QuotasRequest) Validate() error { return r.limits().Validate() }

func (r *QuotasRequest) limits() quota.Limits {
	return quota.Limits{Apps: r.Apps, KeysPerApp: r.KeysPerApp, Webhooks: r.Webhooks, RequestsPerMonth: r.RequestsPerMonth}
}

// QuotaView is one quota and its use.
type QuotaView struct {
	Limit *int64 `json:"limit" doc:"null: unlimited"`
	Used  *int64 `json:"used" doc:"The count the limit applies to (for keysPerApp the app with the most live keys); null where pmapi does not count it yet (requestsPerMonth)"`
}

// QuotasView is a workspace's quotas with their current use.
type QuotasView struct {
	WorkspaceID      string    `json:"workspaceId" format:"uuid"`
	Apps             QuotaView `json:"apps"`
	KeysPerApp       QuotaView `json:"keysPerApp"`
	Webhooks         QuotaView `json:"webhooks"`
	RequestsPerMonth QuotaView `json:"requestsPerMonth"`
}

const quotasNote = " Going over a count quota (apps, keysPerApp, webhooks) answers 429 QUOTA_EXCEEDED with " +
	"`details: {quota, limit, used}` and no Retry-After; a quota lowered below the current use refuses new " +
	"creations and removes nothing."

func (s *Server) adminQuotaOperations() []Operation {
	const tag = "Operator admin"
	return []Operation{
		{
			Method: http.MethodGet, Path: "/admin/v1/workspaces/{workspaceId}/quotas", ID: "adminGetQuotas",
			Tag: tag, Auth: AuthAdmin, Summary: "A workspace's quotas and their current use",
			Description: "Each quota's limit (null: unlimited) and use." + quotasNote,
			Result:      QuotasView{}, Status: http.StatusOK, Handler: s.adminGetQuotas,
		},
		{
			Method: http.MethodPut, Path: "/admin/v1/workspaces/{workspaceId}/quotas", ID: "adminSetQuotas",
			Tag: tag, Auth: AuthAdmin, Summary: "Set a workspace's quotas (null: unlimited)",
			Description: "Replaces every quota; the change is in the workspace's audit log." + quotasNote,
			Body:        QuotasRequest{}, Result: QuotasView{}, Status: http.StatusOK, Handler: s.adminSetQuotas,
		},
	}
}

func (s *Server) adminGetQuotas(c *fiber.Ctx) error {
	w, shard, err := s.workspaceShard(c)
	if err != nil {
		return err
	}
	l, err := quota.Get(c.UserContext(), shard, w.ID)
	if err != nil {
		return err
	}
	return s.answerQuotas(c, shard, w.ID, l)
}

func (s *Server) adminSetQuotas(c *fiber.Ctx) error {
	w, shard, err := s.workspaceShard(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[QuotasRequest](c)
	if err != nil {
		return err
	}
	l, err := quota.Set(c.UserContext(), shard, w.ID, req.limits())
	if err != nil {
		return err
	}
	if s.months != nil {
		s.months.Forget(w.ID)
	}
	return s.answerQuotas(c, shard, w.ID, l)
}

// workspaceShard loads the path's workspace and its shard.
func (s *Server) workspaceShard(c *fiber.Ctx) (tenant.Workspace, *tenant.Shard, error) {
	w, err := s.pathWorkspace(c)
	if err != nil {
		return w, nil, err
	}
	shard, err := s.Directory.ShardOf(w)
	return w, shard, err
}

// answerQuotas answers limits l with the workspace's use of each.
func (s *Server) answerQuotas(c *fiber.Ctx, shard *tenant.Shard, ws uuid.UUID, l quota.Limits) error {
	ctx := c.UserContext()
	apps, keys, err := authz.QuotaUse(ctx, shard, ws)
	if err != nil {
		return err
	}
	used := map[quota.Kind]*int64{quota.Apps: &apps, quota.KeysPerApp: &keys}
	for _, u := range s.catalog.QuotaUse {
		n, err := u.Used(ctx, shard, ws)
		if err != nil {
			return err
		}
		used[u.Kind] = &n
	}
	if s.Usage != nil {
		n, err := s.Usage.MonthRequests(ctx, shard, ws)
		if err != nil {
			return err
		}
		used[quota.RequestsPerMonth] = &n
	}
	view := func(k quota.Kind) QuotaView { return QuotaView{Limit: l.Of(k), Used: used[k]} }
	return respond(c, http.StatusOK, QuotasView{
		WorkspaceID: ws.String(), Apps: view(quota.Apps), KeysPerApp: view(quota.KeysPerApp),
		Webhooks: view(quota.Webhooks), RequestsPerMonth: view(quota.RequestsPerMonth),
	})
}
