package rrca

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/tenant"
)

// Jobs queues the background work of analyses in the caller's transaction.
type Jobs interface {
	// Similarity asks for an analysis's neighbours to be recomputed; repeated
	// requests within a short window collapse into one run.
	Similarity(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, rrcaID uuid.UUID) error
	// Suggest runs a suggestion run (5-why or look-across).
	Suggest(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, runID uuid.UUID) error
}

// Store reads and writes analyses, their nodes, corrective actions and
// suggestions.
type Store struct {
	Events      event.Emitter
	Jobs        Jobs
	ActionItems actionitem.Store
	// Sources are the other resources' rows analyses read (suggestion
	// candidates, project names, corrective actions' items).
	Sources Sources
}

// columns reads an analysis with its node count. The count names the workspace
// parameter ($1 wherever columns is used), not a.workspace_id, so Citus routes
// the statement (and its FOR UPDATE) to one shard.
const columns = `a.id, a.title, a.problem_statement, a.project_id, a.source_risk_id, a.phase,
	(select count(*) from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = a.id)::int as node_count,
	a.created_at, a.updated_at, a.archived_at`

// fields are where the columns go in an Analysis.
func fields(a *Analysis) []any {
	return []any{&a.ID, &a.Title, &a.ProblemStatement, storekit.NullUUID(&a.ProjectID), storekit.NullUUID(&a.SourceRiskID),
		storekit.OneOf(&a.Phase, Phases), &a.NodeCount, &a.CreatedAt, &a.UpdatedAt, storekit.NullTime(&a.ArchivedAt)}
}

func scan(row pgx.Row) (Analysis, error) {
	var a Analysis
	err := row.Scan(fields(&a)...)
	return a, storekit.Found(err, "analysis")
}

func get(ctx context.Context, q storekit.Querier, ws, id uuid.UUID, lock bool) (Analysis, error) {
	sql := "select " + columns + " from rrca_analyses a where a.workspace_id = $1 and a.id = $2"
	if lock {
		sql += " for update of a"
	}
	return scan(q.QueryRow(ctx, sql, ws, id))
}

// NewAnalysis is a validated create.
type NewAnalysis struct {
	Title            string
	ProblemStatement *string
	ProjectID        *uuid.UUID
	SourceRiskID     *uuid.UUID
}

// Create starts an analysis. From a risk, the risk's title and description
// become the problem statement (and its title and project the defaults).
func (s Store) Create(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in NewAnalysis) (Analysis, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (a Analysis, err error) {
		in := in // the defaults below fill a copy, so a retried transaction starts from the caller's values
		problem := ""
		if in.ProblemStatement != nil {
			problem = *in.ProblemStatement
		}
		if in.SourceRiskID != nil {
			src, err := risk.SourceOf(ctx, tx, ws, *in.SourceRiskID)
			if err != nil {
				return a, err
			}
			if in.Title == "" {
				in.Title = src.Title
			}
			if in.ProblemStatement == nil {
				problem = src.Title
				if src.Description != nil && *src.Description != "" {
					problem += "\n\n" + *src.Description
				}
			}
			if in.ProjectID == nil {
				in.ProjectID = &src.ProjectID
			}
		}
		if in.Title == "" {
			return a, pmapi.Invalid("title", "title is required (or give sourceRiskId)")
		}
		if in.ProjectID != nil {
			if err := project.Exists(ctx, tx, ws, *in.ProjectID); err != nil {
				return a, err
			}
		}
		id := pmapi.NewID()
		_, err = tx.Exec(ctx, `insert into rrca_analyses
			(workspace_id, id, title, problem_statement, project_id, source_risk_id)
			values ($1, $2, $3, $4, $5, $6)`, ws, id, in.Title, problem, in.ProjectID, in.SourceRiskID)
		if err != nil {
			return a, err
		}
		return s.written(ctx, tx, shard, ws, id, "rrca.created")
	})
}

// written ends a create or an edit of the analysis's text: it records the
// change for the similarity job (changed), rereads the row and emits typ.
func (s Store) written(
	ctx context.Context,
	tx pgx.Tx,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	typ string,
) (Analysis, error) {
	if err := s.changed(ctx, tx, shard, ws, id); err != nil {
		return Analysis{}, err
	}
	a, err := get(ctx, tx, ws, id, false)
	if err != nil {
		return a, err
	}
	return a, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: typ, Data: ToView(a)})
}

// Update edits the title or problem statement, queueing a similarity run.
func (s Store) Update(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	title, problem *string,
) (Analysis, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (a Analysis, err error) {
		cur, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return a, err
		}
		if err := s.ifMatch(ctx, tx, ws, cur); err != nil {
			return a, err
		}
		validate.Set(&cur.Title, title)
		validate.Set(&cur.ProblemStatement, problem)
		if _, err := tx.Exec(ctx, `update rrca_analyses set title = $3, problem_statement = $4
			where workspace_id = $1 and id = $2`, ws, id, cur.Title, cur.ProblemStatement); err != nil {
			return a, err
		}
		return s.written(ctx, tx, shard, ws, id, "rrca.updated")
	})
}

// Full is an analysis with its corrective actions and phase history.
type Full struct {
	Analysis
	Correctives []CorrectiveAction
	History     []PhaseChange
}

// Detail returns an analysis with its corrective actions and phase history, in
// one round trip.
func (s Store) Detail(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Full, error) {
	var f Full
	if err := s.Sources.check(); err != nil {
		return f, err
	}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		storekit.QueueRow(
			b,
			&f.Analysis,
			scan,
			"select "+columns+" from rrca_analyses a where a.workspace_id = $1 and a.id = $2",
			ws,
			id,
		)
		s.Sources.queueCorrective(b, ws, id, &f.Correctives)
		queueHistory(b, ws, id, &f.History)
	})
	return f, err
}

// queueHistory reads an analysis's phase changes, oldest first.
func queueHistory(b *pgx.Batch, ws, id uuid.UUID, out *[]PhaseChange) {
	storekit.QueueRows(b, out, func(row pgx.Row) (p PhaseChange, err error) {
		err = row.Scan(&p.From, &p.To, &p.Actor, &p.At)
		return p, err
	}, `select from_phase, to_phase, actor, at from rrca_phase_history
			where workspace_id = $1 and rrca_id = $2 order by id`, ws, id)
}

// queueCorrective reads an analysis's corrective actions with their items'
// status.
func (s Sources) queueCorrective(b *pgx.Batch, ws, id uuid.UUID, out *[]CorrectiveAction) {
	storekit.QueueRows(b, out, func(row pgx.Row) (c CorrectiveAction, err error) {
		err = row.Scan(&c.ID, &c.RRCAID, &c.NodeID, &c.ActionItemID, &c.Title, &c.ItemStatus, &c.CreatedAt)
		return c, err
	}, `select c.id, c.rrca_id, c.node_id, c.action_item_id, c.title, i.status, c.created_at
		from corrective_actions c `+s.itemJoin()+`
		where c.workspace_id = $1 and c.rrca_id = $2 order by c.id`, ws, id)
}

// readAnalysis reads what queue asks about analysis id in one round trip; an
// analysis the workspace does not have is not found.
func readAnalysis(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, queue func(b *pgx.Batch)) error {
	return storekit.ReadUnder(
		ctx,
		shard,
		ws,
		"analysis",
		"select exists(select 1 from rrca_analyses where workspace_id = $1 and id = $2)",
		id,
		queue,
	)
}

// Filter selects analyses for a list.
type Filter struct {
	Phase           string
	ProjectID       *uuid.UUID
	SourceRiskID    *uuid.UUID
	IncludeArchived bool
	Page            api.Keyset // updatedSince, the order and where the page starts
	Limit           int
}

// List returns a page of analyses, newest first.
func (s Store) List(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error {
	w := storekit.NewWhere("a", ws)
	w.Equal("phase", f.Phase)
	w.Equal("project_id", f.ProjectID)
	w.Equal("source_risk_id", f.SourceRiskID)
	w.Live(f.IncludeArchived)
	w.Page(f.Page)
	sql := "select " + columns + " from rrca_analyses a where " + w.SQL() + " order by " + w.Order() +
		" limit " + storekit.Limit(f.Limit)
	return storekit.ListJSON(ctx, shard, ws, f.Limit, viewJSON, rows, sql, w.Args()...)
}

// Advance moves the analysis to its next phase when the gate allows it.
func (s Store) Advance(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, to, actor string) (Analysis, error) {
	if err := s.Sources.check(); err != nil {
		return Analysis{}, err
	}
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (a Analysis, err error) {
		cur, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return a, err
		}
		if err := s.ifMatch(ctx, tx, ws, cur); err != nil {
			return a, err
		}
		var f Facts
		err = tx.QueryRow(ctx, `select
			(select count(*) from rrca_nodes where workspace_id = $1 and rrca_id = $2 and kind = 'ROOT_CAUSE')::int,
			(select count(*) from corrective_actions where workspace_id = $1 and rrca_id = $2)::int,
			coalesce((select array_agg(coalesce('act_' || c.action_item_id::text, 'cac_' || c.id::text) order by c.id)
				from corrective_actions c `+s.Sources.itemJoin()+`
				where c.workspace_id = $1 and c.rrca_id = $2 and (i.status is null or i.status <> all($3))), '{}')`,
			ws, id, actionitem.ClosedStatuses).Scan(&f.RootCauses, &f.CorrectiveActions, &f.OpenActionItems)
		if err != nil {
			return a, err
		}
		f.OpenActionItems = formatOpen(f.OpenActionItems)
		next, err := CheckAdvance(cur.Phase, to, f)
		if err != nil {
			return a, err
		}
		_, err = tx.Exec(ctx, `update rrca_analyses set phase = $3, updated_at = now()
			where workspace_id = $1 and id = $2`, ws, id, next)
		if err != nil {
			return a, err
		}
		if _, err := tx.Exec(ctx, `insert into rrca_phase_history (workspace_id, id, rrca_id, from_phase, to_phase, actor)
			values ($1, $2, $3, $4, $5, $6)`, ws, pmapi.NewID(), id, cur.Phase, next, actor); err != nil {
			return a, err
		}
		if a, err = get(ctx, tx, ws, id, false); err != nil {
			return a, err
		}
		return a, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.advanced",
			Data: PhaseEvent{RRCAID: pmapi.FormatID(IDPrefix, id), From: cur.Phase, To: next}})
	})
}

// formatOpen turns "act_<uuid>" / "cac_<uuid>" texts into API ids.
func formatOpen(raw []string) []string {
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		prefix, rest, _ := strings.Cut(r, "_")
		if id, err := uuid.Parse(rest); err == nil {
			out = append(out, pmapi.FormatID(prefix+"_", id))
		}
	}
	return out
}

// SetArchived archives or restores; repeating it changes and emits nothing.
// An archived analysis has no neighbours and is no one's: the change goes to
// the similarity job.
func (s Store) SetArchived(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id uuid.UUID,
	archived bool,
) (Analysis, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (Analysis, error) {
		before, err := get(ctx, tx, ws, id, true)
		if err != nil {
			return before, err
		}
		ar := archival
		ar.Detail = s.detailTx
		a, err := ar.Set(ctx, tx, shard, s.Events, ws, id, archived)
		if err != nil || (before.ArchivedAt == nil) == (a.ArchivedAt == nil) {
			return a, err
		}
		return a, s.Jobs.Similarity(ctx, tx, shard, ws, id)
	})
}

var archival = storekit.Archival[Analysis]{Noun: "rrca",
	// Each bumps the similarity version: SetArchived queues the job.
	Archive: `update rrca_analyses set archived_at = now(), updated_at = now(),
		similarity_version = similarity_version + 1 where workspace_id = $1 and id = $2`,
	Restore: `update rrca_analyses set archived_at = null, updated_at = now(),
		similarity_version = similarity_version + 1 where workspace_id = $1 and id = $2`,
	Read:       get,
	ArchivedAt: func(a Analysis) *time.Time { return a.ArchivedAt }, View: func(a Analysis) any { return ToView(a) }}
