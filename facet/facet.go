// Package facet holds what a resource tells the features that span every
// resource about itself: how search (and rrca's suggestions) read its table
// (Search) and how a project delete reaches its rows (Cascade). It is a leaf,
// so the API core can gather these from every registration without importing
// any resource package.
package facet

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Search is one searchable resource type. Its expressions are SQL over the
// table aliased `r` and, when it has one, its Docs table aliased `d`; they are
// constants of the code, never user input. The table that holds the text has
// a stored tsvector column search_doc of Title (weight A) and Body (weight B)
// with a GIN index (migrations 0014, 0015); Table has updated_at.
type Search struct {
	Type  string // the item's `type`, e.g. "task"
	Scope string // the read scope needed to see it
	Table string
	// Docs is the table beside Table that holds the text, its search_doc and
	// its trigram indexes, keyed like Table (workspace_id, id); "" when Table
	// holds them itself. Text there keeps a change of anything else in a row
	// (a status) off the GIN indexes and the tsvector (migration 0015).
	Docs      string
	IDPrefix  string
	Title     string // expression for the title
	Body      string // expression for the longer text (may be "''")
	ProjectID string // expression for the owning project's id, or "null"
	// Fuzzy are the columns the trigram branch compares with the query, each
	// with a pg_trgm GIN index; bare columns, since under row-level security
	// an expression such as coalesce() keeps the planner off the index.
	Fuzzy []string
	// Status is the expression of the row's status and Statuses its values;
	// "" for a type without one, which a search by status does not read.
	Status   string
	Statuses []string
	// Live is the condition for rows that are not archived or deleted.
	Live string
}

// From is the source's tables and their workspace condition, for a FROM
// clause that goes on with more conditions (it ends in "and"): Table as r
// and, when the text lives beside it, its Docs table as d, each row read by
// its key. Search and rrca's suggestions compose their statements with it, so
// both reach a source's rows the same way. OFFSET 0 keeps the lookup by key a
// subquery run per Docs row: as a plain join, at 100,000 tasks the planner
// read every task for a hash join with a search's few hundred hits (7.9 ms
// of PostgreSQL a search against 2.7 ms).
func (s Search) From() string {
	if s.Docs == "" {
		return pgx.Identifier{s.Table}.Sanitize() + " r where r.workspace_id = $1 and"
	}
	return pgx.Identifier{
		s.Docs,
	}.Sanitize() + " d cross join lateral (select * from " + pgx.Identifier{
		s.Table,
	}.Sanitize() +
		" r where r.workspace_id = $1 and r.id = d.id offset 0) r where d.workspace_id = $1 and"
}

// Cascade is a resource that lives in a project and goes when the project is
// deleted. The project store emits Event for each row removed, with the row's
// id under IDField and the project's id under projectId.
type Cascade struct {
	Table    string // for the deleted counts of the project delete's answer
	Event    string // e.g. "task.deleted"
	IDPrefix string // e.g. "tsk_"
	IDField  string // the payload's id field, e.g. "taskId"
	// Remove deletes the project's rows inside the delete's transaction and
	// returns their ids. The owning package runs it, so only it writes its
	// table (and clears references to the rows first where it must).
	Remove func(ctx context.Context, tx pgx.Tx, ws, project uuid.UUID) ([]uuid.UUID, error)
}
