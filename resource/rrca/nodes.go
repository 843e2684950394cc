package rrca

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/tenant"
)

const nodeColumns = "n.id, n.rrca_id, n.parent_id, n.kind, n.text, n.suggestion_run_id, n.created_at"

func scanNode(row pgx.Row) (Node, error) {
	var n Node
	err := row.Scan(&n.ID, &n.RRCAID, &n.ParentID, &n.Kind, &n.Text, &n.SuggestionRunID, &n.CreatedAt)
	return n, storekit.Found(err, "node")
}

// Nodes lists an analysis's nodes, oldest first, optionally of one kind.
func (s Store) Nodes(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, kind string) ([]Node, error) {
	var nodes []Node
	err := readAnalysis(ctx, shard, ws, id, func(b *pgx.Batch) {
		storekit.QueueRows(b, &nodes, scanNode, "select "+nodeColumns+` from rrca_nodes n
			where n.workspace_id = $1 and n.rrca_id = $2 and ($3 = '' or n.kind = $3) order by n.id`, ws, id, kind)
	})
	return nodes, err
}

// AddNode adds a node under parent (which must be a node of the same analysis),
// queueing a similarity run since the analysis's text changed.
func (s Store) AddNode(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	kind, text string,
	parent *uuid.UUID,
) (Node, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (n Node, err error) {
		if _, err := get(ctx, tx, ws, id, true); err != nil {
			return n, err
		}
		if parent != nil {
			var ok bool
			err := tx.QueryRow(ctx, `select exists(select 1 from rrca_nodes
				where workspace_id = $1 and rrca_id = $2 and id = $3)`, ws, id, *parent).Scan(&ok)
			if err != nil {
				return n, err
			}
			if !ok {
				return n, pmapi.Invalid("parentId", "parentId must be a node of this analysis")
			}
		}
		n, err = scanNode(tx.QueryRow(ctx, `insert into rrca_nodes as n (workspace_id, id, rrca_id, parent_id, kind, text)
			values ($1, $2, $3, $4, $5, $6) returning `+nodeColumns, ws, pmapi.NewID(), id, parent, kind, text))
		if err != nil {
			return n, err
		}
		if err := s.changed(ctx, tx, shard, ws, id); err != nil {
			return n, err
		}
		return n, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.node_added",
			Data: NodeEvent{RRCAID: pmapi.FormatID(IDPrefix, id), NodeID: pmapi.FormatID(NodeIDPrefix, n.ID), Kind: kind}})
	})
}

func touch(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) error {
	_, err := tx.Exec(ctx, "update rrca_analyses set updated_at = now() where workspace_id = $1 and id = $2", ws, id)
	return err
}

// DeleteNode removes a node and its whole subtree, returning every id removed.
func (s Store) DeleteNode(ctx context.Context, shard *tenant.Shard, ws, id, node uuid.UUID) ([]uuid.UUID, error) {
	var removed []uuid.UUID
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		removed = nil
		a, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return err
		}
		target, err := scanNode(
			tx.QueryRow(
				ctx,
				"select "+nodeColumns+" from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = $2 and n.id = $3",
				ws,
				id,
				node,
			),
		)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `with recursive sub as (
				select id from rrca_nodes where workspace_id = $1 and id = $2
				union all
				select n.id from rrca_nodes n join sub on n.parent_id = sub.id where n.workspace_id = $1
			) select id from sub order by id`, ws, node)
		if err != nil {
			return err
		}
		if removed, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
			return err
		}
		var removing, total int
		err = tx.QueryRow(ctx, `select count(*) filter (where id = any($3)), count(*) from rrca_nodes
				where workspace_id = $1 and rrca_id = $2 and kind = 'ROOT_CAUSE'`, ws, id, removed).
			Scan(&removing, &total)
		if err != nil {
			return err
		}
		if err := CheckNodeDelete(a.Phase, removing, total); err != nil {
			return err
		}
		// Corrective actions keep their record when their root cause goes. The
		// key to rrca_nodes cannot set NULL on Citus, so the references are
		// cleared here; the analysis's lock keeps the subtree as read.
		_, err = tx.Exec(ctx, `update corrective_actions set node_id = null
			where workspace_id = $1 and node_id = any($2)`, ws, removed)
		if err != nil {
			return err
		}
		// The foreign key on parent_id cascades: one delete removes the subtree.
		if _, err := tx.Exec(ctx, "delete from rrca_nodes where workspace_id = $1 and id = $2", ws, node); err != nil {
			return err
		}
		// A suggestion's text is in no profile; any other node's is.
		if target.Kind == KindWhySuggestion {
			if err := touch(ctx, tx, ws, id); err != nil {
				return err
			}
		} else if err := s.changed(ctx, tx, shard, ws, id); err != nil {
			return err
		}
		ids := make([]string, len(removed))
		for i, r := range removed {
			ids[i] = pmapi.FormatID(NodeIDPrefix, r)
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.node_deleted",
			Data: NodeEvent{
				RRCAID: pmapi.FormatID(IDPrefix, id),
				NodeID: pmapi.FormatID(NodeIDPrefix, node),
				Kind:   target.Kind,
				Nodes:  ids,
			}})
	})
	return removed, err
}

// AcceptSuggestion turns a WHY_SUGGESTION node into a WHY.
func (s Store) AcceptSuggestion(ctx context.Context, shard *tenant.Shard, ws, id, node uuid.UUID) (Node, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (n Node, err error) {
		if _, err := get(ctx, tx, ws, id, true); err != nil {
			return n, err
		}
		cur, err := scanNode(
			tx.QueryRow(
				ctx,
				"select "+nodeColumns+" from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = $2 and n.id = $3 for update",
				ws,
				id,
				node,
			),
		)
		if err != nil {
			return n, err
		}
		if cur.Kind != KindWhySuggestion {
			return n, pmapi.Errorf(pmapi.CodeConflict, "only WHY_SUGGESTION nodes can be accepted; this one is %s", cur.Kind)
		}
		n, err = scanNode(tx.QueryRow(ctx, `update rrca_nodes n set kind = 'WHY'
			where n.workspace_id = $1 and n.id = $2 returning `+nodeColumns, ws, node))
		if err != nil {
			return n, err
		}
		// Its text joins the analysis's profile.
		if err := s.changed(ctx, tx, shard, ws, id); err != nil {
			return n, err
		}
		return n, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.node_added",
			Data: NodeEvent{RRCAID: pmapi.FormatID(IDPrefix, id), NodeID: pmapi.FormatID(NodeIDPrefix, node), Kind: KindWhy}})
	})
}

// AddCorrective emits a corrective action from a ROOT_CAUSE node: it creates an
// action item (source CORRECTIVE_ACTION, in the analysis's project) that points
// back at the analysis and node, and records the link.
func (s Store) AddCorrective(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	node uuid.UUID,
	item actionitem.NewItem,
) (CorrectiveAction, actionitem.Item, error) {
	var ca CorrectiveAction
	var it actionitem.Item
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		a, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return err
		}
		var kind string
		err = tx.QueryRow(ctx, `select kind from rrca_nodes
			where workspace_id = $1 and rrca_id = $2 and id = $3`, ws, id, node).Scan(&kind)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && kind != KindRootCause) {
			return pmapi.Invalid("nodeId", "nodeId must be a ROOT_CAUSE node of this analysis")
		}
		if err != nil {
			return err
		}
		item.Source = actionitem.SourceCorrectiveAction
		item.SourceRRCAID, item.SourceNodeID, item.ProjectID = &id, &node, a.ProjectID
		if it, err = s.ActionItems.CreateTx(ctx, tx, shard, ws, item); err != nil {
			return err
		}
		ca = CorrectiveAction{
			ID:           pmapi.NewID(),
			RRCAID:       id,
			NodeID:       &node,
			ActionItemID: &it.ID,
			Title:        it.Title,
			ItemStatus:   &it.Status,
		}
		err = tx.QueryRow(ctx, `insert into corrective_actions (workspace_id, id, rrca_id, node_id, action_item_id, title)
			values ($1, $2, $3, $4, $5, $6) returning created_at`, ws, ca.ID, id, node, it.ID, it.Title).
			Scan(&ca.CreatedAt)
		if err != nil {
			return err
		}
		if err := touch(ctx, tx, ws, id); err != nil {
			return err
		}
		return s.Events.Emit(
			ctx,
			tx,
			shard,
			ws,
			event.Event{Type: "rrca.corrective_action_added", Data: ToCorrectiveView(ca)},
		)
	})
	return ca, it, err
}

// Correctives lists an analysis's corrective actions with their items' status.
func (s Store) Correctives(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) ([]CorrectiveAction, error) {
	var cas []CorrectiveAction
	if err := s.Sources.check(); err != nil {
		return nil, err
	}
	err := readAnalysis(ctx, shard, ws, id, func(b *pgx.Batch) { s.Sources.queueCorrective(b, ws, id, &cas) })
	return cas, err
}
