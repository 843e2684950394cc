package risk

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/internal/storekit"
)

// Source is what another resource made from a risk starts with (an analysis
// from its risk: rrca.Store.Create).
type Source struct {
	Title       string
	Description *string
	ProjectID   uuid.UUID
}

// SourceOf reads risk id of the workspace in tx for a resource made from it;
// a risk that is not there is not found.
func SourceOf(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) (Source, error) {
	var s Source
	err := tx.QueryRow(ctx, `select title, description, project_id from risks
		where workspace_id = $1 and id = $2`, ws, id).
		Scan(&s.Title, &s.Description, &s.ProjectID)
	return s, storekit.Found(err, "risk")
}
