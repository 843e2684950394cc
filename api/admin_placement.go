package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// PlacementView is where a workspace's rows live inside its shard's Citus
// cluster.
type PlacementView struct {
	WorkspaceID string `json:"workspaceId" format:"uuid"`
	Shard       string `json:"shard" doc:"The directory shard (a PostgreSQL server or Citus cluster) of the workspace"`
	CitusShard  int64  `json:"citusShardId" doc:"Citus shard of the users table holding the workspace; every tenant table's shard for it is colocated and moves with it"`
	Node        string `json:"node" doc:"host:port of the Citus node holding the workspace's shards"`
	Isolated    bool   `json:"isolated" doc:"true when those shards hold this workspace alone (after isolate)"`
}

// MoveWorkspaceRequest names the node to move a workspace's shards to.
type MoveWorkspaceRequest struct {
	Node string `json:"node" example:"10.0.0.12:5432" doc:"host:port of an active node of the cluster, as pg_dist_node names it"`
}

// Validate checks the fields before any database work.
func (r *MoveWorkspaceRequest) Validate() error {
	r.Node = strings.TrimSpace(r.Node)
	if r.Node == "" {
		return pmapi.Invalid("node", "node is required (HOST:PORT)")
	}
	return nil
}

const placementNote = " On plain PostgreSQL, or when this process has no owner-role URL " +
	"(PMAPI_MIGRATE_DATABASE_URL), it answers 409 CONFLICT with details.requires."

func (s *Server) adminPlacementOperations() []Operation {
	const tag = "Operator admin"
	return []Operation{
		{
			Method:      http.MethodGet,
			Path:        "/admin/v1/workspaces/{workspaceId}/placement",
			ID:          "adminGetPlacement",
			Fails:       []pmapi.Code{pmapi.CodeConflict},
			Tag:         tag,
			Auth:        AuthAdmin,
			Summary:     "Where a workspace's rows live on a Citus cluster",
			Description: "The Citus shard and node holding the workspace." + placementNote,
			Result:      PlacementView{},
			Status:      http.StatusOK,
			Handler:     s.adminPlacement(nil, ""),
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/isolate",
			ID:      "adminIsolateWorkspace",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Give a workspace Citus shards of its own",
			Description: "Splits the workspace out of the shard group it shares " +
				"(isolate_tenant_to_new_shard ... CASCADE, block_writes: " +
				"writes to the shared hash range wait for the split's copy, none fails) onto the same node; " +
				"answers when done. A workspace already isolated is left as it is." + placementNote,
			Result:  PlacementView{},
			Status:  http.StatusOK,
			Handler: s.adminPlacement((*tenant.Placer).Isolate, audit.WorkspaceIsolated),
		},
		{
			Method:  http.MethodPost,
			Path:    "/admin/v1/workspaces/{workspaceId}/move",
			ID:      "adminMoveWorkspace",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Move a workspace's Citus shards to another node, online",
			Description: "citus_move_shard_placement with logical replication: reads and writes go on, " +
				"and are held only for the final catch-up; answers when done. " +
				"Every workspace of the same shard group moves too, so isolate a large workspace first." + placementNote,
			Body:    MoveWorkspaceRequest{},
			Result:  PlacementView{},
			Status:  http.StatusOK,
			Handler: s.adminMoveWorkspace,
		},
	}
}

func placementView(w tenant.Workspace, p tenant.Placement) PlacementView {
	return PlacementView{
		WorkspaceID: w.ID.String(),
		Shard:       w.Shard,
		CitusShard:  p.ShardID,
		Node:        p.Node,
		Isolated:    p.Isolated,
	}
}

// adminPlacement answers a workspace's placement after act (nil: as it is),
// recording act in the workspace's audit log as action.
func (s *Server) adminPlacement(
	act func(*tenant.Placer, context.Context, tenant.Workspace) (tenant.Placement, error),
	action string,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w, err := s.pathWorkspace(c)
		if err != nil {
			return err
		}
		if act == nil {
			act = (*tenant.Placer).Where
		}
		p, err := act(s.Placer, c.UserContext(), w)
		if err != nil {
			return err
		}
		if action != "" {
			if err := s.recordOperatorAction(c.UserContext(), w, action); err != nil {
				return err
			}
		}
		return respond(c, http.StatusOK, placementView(w, p))
	}
}

func (s *Server) adminMoveWorkspace(c *fiber.Ctx) error {
	w, err := s.pathWorkspace(c)
	if err != nil {
		return err
	}
	req, err := decodeBody[MoveWorkspaceRequest](c)
	if err != nil {
		return err
	}
	p, err := s.Placer.Move(c.UserContext(), w, req.Node)
	if err != nil {
		return err
	}
	if err := s.recordOperatorAction(c.UserContext(), w, audit.WorkspaceMoved); err != nil {
		return err
	}
	return respond(c, http.StatusOK, placementView(w, p))
}

func (s *Server) pathWorkspace(c *fiber.Ctx) (tenant.Workspace, error) {
	id, err := parseUUIDParam(c, "workspaceId", "workspace")
	if err != nil {
		return tenant.Workspace{}, err
	}
	return s.Directory.Get(c.UserContext(), id)
}

// auditedDirectoryChange makes change, an operator's change to the
// directory, with its entry in the workspace's audit log. The directory and
// the workspace's rows may be different databases, so there is no one
// transaction: the entry is written first in a transaction on the
// workspace's shard that commits only after change has, so a change that
// fails leaves no entry; only a shard that fails between the two commits
// leaves the change without its entry, and the request then fails (503).
func (s *Server) auditedDirectoryChange(
	ctx context.Context,
	id uuid.UUID,
	action string,
	change func(ctx context.Context) error,
) error {
	w, err := s.Directory.Get(ctx, id)
	if err != nil {
		return err
	}
	shard, err := s.Directory.ShardOf(w)
	if err != nil {
		return err
	}
	return shard.Tx(ctx, id, func(tx pgx.Tx) error {
		if err := audit.Record(ctx, tx, id, action, workspaceTarget(id)); err != nil {
			return err
		}
		return change(ctx)
	})
}

// recordOperatorAction records a change already made to where a workspace's
// rows live (placement, isolation, a move): those wait for every open
// transaction on the workspace's shards, so none can stay open across them.
func (s *Server) recordOperatorAction(ctx context.Context, w tenant.Workspace, action string) error {
	shard, err := s.Directory.ShardOf(w)
	if err != nil {
		return err
	}
	return shard.Tx(ctx, w.ID, func(tx pgx.Tx) error {
		return audit.Record(ctx, tx, w.ID, action, workspaceTarget(w.ID))
	})
}

func workspaceTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: "workspace", ID: id.String()}
}
