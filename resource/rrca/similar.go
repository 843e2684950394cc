package rrca

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// docSQL is the text an analysis is compared by: title, problem statement and
// every node but unaccepted suggestions. Its subquery names the workspace
// parameter ($1), not a.workspace_id, so Citus keeps it on one shard.
const docSQL = `a.title || ' ' || a.problem_statement || ' ' || coalesce((select string_agg(n.text, ' ' order by n.id)
	from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = a.id and n.kind <> 'WHY_SUGGESTION'), '')`

// minSimilar is the score below which two analyses are not called similar.
const minSimilar = 0.05

// UpdatedAt is when the analysis last changed, for the similarity job to
// tell whether a change came while it computed; an analysis that is gone is
// not found.
func (s Store) UpdatedAt(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (time.Time, error) {
	var at time.Time
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select updated_at from rrca_analyses where workspace_id = $1 and id = $2", ws, id).
			QueryRow(func(r pgx.Row) error { return storekit.Found(r.Scan(&at), "analysis") })
	})
	return at, err
}

// RecomputeSimilar scores the analysis against every other live analysis of the
// workspace and stores the pairs in both directions (the score is symmetric), so
// the others' lists stay current too.
func (s Store) RecomputeSimilar(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `with docs as (
				select a.id, `+docSQL+` as doc from rrca_analyses a
				where a.workspace_id = $1 and (a.archived_at is null or a.id = $2))
			select o.id, rrca_text_similarity(me.doc, o.doc) from docs o, docs me
			where me.id = $2 and o.id <> me.id`, ws, id)
		if err != nil {
			return err
		}
		type pair struct {
			other uuid.UUID
			score float64
		}
		var pairs []pair
		for rows.Next() {
			var p pair
			if err := rows.Scan(&p.other, &p.score); err != nil {
				return err
			}
			if p.score >= minSimilar {
				pairs = append(pairs, p)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue("delete from rrca_similar where workspace_id = $1 and (rrca_id = $2 or similar_id = $2)", ws, id)
		// The analysis paired with itself marks that its neighbours were
		// computed, also when none was found: computedAt then says "computed,
		// nothing similar" where no row would read as "never computed".
		b.Queue("insert into rrca_similar (workspace_id, rrca_id, similar_id, score) values ($1, $2, $2, 0)", ws, id)
		for _, p := range pairs {
			// An upsert: the job of the other analysis writes the same two rows
			// and may have committed them since this one's delete.
			b.Queue(`insert into rrca_similar (workspace_id, rrca_id, similar_id, score) values ($1, $2, $3, $4), ($1, $3, $2, $4)
				on conflict (workspace_id, rrca_id, similar_id) do update set score = excluded.score, computed_at = excluded.computed_at`,
				ws, id, p.other, p.score)
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// SimilarItem is one neighbour of an analysis.
type SimilarItem struct {
	RRCAID     string    `json:"rrcaId"`
	Title      string    `json:"title"`
	ProjectID  *string   `json:"projectId"`
	Phase      string    `json:"phase" enum:"DEFINE,CONTAIN,ANALYZE,CORRECT,VERIFY,CLOSED"`
	Score      float64   `json:"score" doc:"0 to 1; higher is more alike"`
	ComputedAt time.Time `json:"computedAt"`
}

// SimilarList is an analysis's neighbours, best first.
type SimilarList struct {
	Items []SimilarItem `json:"items"`
	// ComputedAt is when the analysis's own neighbours were last computed,
	// null when they never were (an empty list with a time: none is similar).
	ComputedAt *time.Time `json:"computedAt"`
	// Pending says a recomputation is queued or running: the list may change.
	Pending bool `json:"pending"`
}

// Similar returns the analysis's neighbours, best first, and whether a
// recomputation is pending.
func (s Store) Similar(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, limit int) (SimilarList, error) {
	out := SimilarList{Items: []SimilarItem{}}
	err := readAnalysis(ctx, shard, ws, id, func(b *pgx.Batch) {
		b.Queue(`select a.id, a.title, a.project_id, a.phase, s.score, s.computed_at
			from rrca_similar s join rrca_analyses a on a.workspace_id = s.workspace_id and a.id = s.similar_id
			where s.workspace_id = $1 and s.rrca_id = $2 and s.similar_id <> $2 and a.archived_at is null
			order by s.score desc, a.id limit $3`, ws, id, limit).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var it SimilarItem
				var rid uuid.UUID
				var pid *uuid.UUID
				if err := rows.Scan(&rid, &it.Title, &pid, &it.Phase, &it.Score, &it.ComputedAt); err != nil {
					return err
				}
				it.RRCAID, it.ProjectID = pmapi.FormatID(IDPrefix, rid), pmapi.FormatOptionalID(project.IDPrefix, pid)
				out.Items = append(out.Items, it)
			}
			return rows.Err()
		})
		b.Queue(`select max(computed_at) from rrca_similar where workspace_id = $1 and rrca_id = $2`, ws, id).
			QueryRow(func(r pgx.Row) error { return r.Scan(&out.ComputedAt) })
		b.Queue(`select exists(select 1 from river.river_job where kind = 'rrca.similarity'
				and state in ('available', 'scheduled', 'running', 'retryable', 'pending')
				and args->>'workspaceId' = $1::text and args->>'rrcaId' = $2::text)`, ws, id).
			QueryRow(func(r pgx.Row) error { return r.Scan(&out.Pending) })
	})
	return out, err
}
