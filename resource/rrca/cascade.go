package rrca

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
)

// DeletedEvent is the data of rrca.deleted.
type DeletedEvent struct {
	RRCAID    string `json:"rrcaId"`
	ProjectID string `json:"projectId"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (DeletedEvent) SchemaName() string { return "RRCADeletedEvent" }

// Tables are the tenant tables analyses own.
var Tables = []string{"rrca_analyses", "rrca_phase_history", "rrca_nodes", "corrective_actions", "rrca_similar",
	"rrca_similarity", "rrca_terms", "rrca_similarity_locks", "rrca_suggestion_runs", "look_across_suggestions"}

// RemoveInProject deletes the analyses of a project being deleted (their
// nodes, history and runs go with them by their keys), inside its transaction,
// and returns their ids (the project store emits rrca.deleted).
var RemoveInProject = storekit.Removal(
	"delete from rrca_analyses where workspace_id = $1 and project_id = $2 returning id")

// DetachActionItems clears the corrective actions' references to action items
// about to be deleted: a corrective action outlives its item (an analysis
// counts it as open), and the foreign key cannot set NULL itself on Citus.
func DetachActionItems(ctx context.Context, tx pgx.Tx, ws uuid.UUID, items []uuid.UUID) error {
	_, err := tx.Exec(
		ctx,
		"update corrective_actions set action_item_id = null where workspace_id = $1 and action_item_id = any($2)",
		ws,
		items,
	)
	return err
}
