package rrca

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
	"github.com/pmapi/pmapi/tenant"
)

// MinSimilar is the score below which two analyses are not called similar
// (and their pair is not stored).
const MinSimilar = 0.1

// changed records, in a writing transaction, a change to what the analysis's
// neighbours depend on (its text, its archiving) and queues the similarity
// job. The update takes the analysis's row lock before the job is queued:
// the job completes only while holding that lock (RecomputeSimilar), so a
// change whose job River drops as a duplicate of a running one is a change
// that running job waits for and sees.
func (s Store) changed(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws, id uuid.UUID) error {
	if _, err := tx.Exec(ctx, `update rrca_analyses set similarity_version = similarity_version + 1, updated_at = now()
		where workspace_id = $1 and id = $2`, ws, id); err != nil {
		return err
	}
	return s.Jobs.Similarity(ctx, tx, shard, ws, id)
}

// Profile reads the analysis's texts with their lexemes, in tx, and builds
// its profile; archived says it is archived (it then has no neighbours).
// version is its similarity version. lock takes the analysis's row lock.
func profileOf(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID, lock bool) (
	p suggest.Profile, version int64, archived bool, err error) {
	sql := `select a.similarity_version, a.archived_at is not null,
			tsvector_to_array(to_tsvector('english'::regconfig, a.title)),
			tsvector_to_array(to_tsvector('english'::regconfig, a.problem_statement))
		from rrca_analyses a where a.workspace_id = $1 and a.id = $2`
	if lock {
		sql += " for update of a"
	}
	var title, problem []string
	if err = tx.QueryRow(ctx, sql, ws, id).Scan(&version, &archived, &title, &problem); err != nil {
		return p, 0, false, storekit.Found(err, "analysis")
	}
	texts := []suggest.Text{{Kind: "TITLE", Terms: title}, {Kind: "STATEMENT", Terms: problem}}
	nodes, err := nodeTexts(ctx, tx, ws, id)
	if err != nil {
		return p, 0, false, err
	}
	for _, n := range nodes {
		texts = append(texts, n.Text)
	}
	return suggest.NewProfile(texts), version, archived, nil
}

// nodeText is a node with its lexemes and its depth in the why chain.
type nodeText struct {
	ID   uuid.UUID
	Body string
	suggest.Text
}

// nodeTexts reads an analysis's nodes but unaccepted suggestions, with their
// lexemes; a WHY's depth counts the WHYs above it.
func nodeTexts(ctx context.Context, q pgx.Tx, ws, id uuid.UUID) ([]nodeText, error) {
	rows, err := q.Query(ctx, `select n.id, n.parent_id, n.kind, n.text,
			tsvector_to_array(to_tsvector('english'::regconfig, n.text))
		from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = $2 and n.kind <> 'WHY_SUGGESTION'
		order by n.id`, ws, id)
	if err != nil {
		return nil, err
	}
	var out []nodeText
	parents := map[uuid.UUID]*uuid.UUID{}
	kinds := map[uuid.UUID]string{}
	for rows.Next() {
		var n nodeText
		var parent *uuid.UUID
		if err := rows.Scan(&n.ID, &parent, &n.Kind, &n.Body, &n.Terms); err != nil {
			return nil, err
		}
		parents[n.ID], kinds[n.ID] = parent, n.Kind
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, n := range out {
		if n.Kind != KindWhy {
			continue
		}
		depth := 1
		for p := parents[n.ID]; p != nil && depth <= len(out); p = parents[*p] {
			if kinds[*p] == KindWhy {
				depth++
			}
		}
		out[i].Depth = depth
	}
	return out, nil
}

// RecomputeSimilar computes the analysis's profile and its neighbours and
// stores each pair once, under the analysis (the score is symmetric and a
// list reads the pairs of both columns, pairsOf, so the others' lists stay
// current too), in one transaction that then calls complete (the job's
// completion, so that it commits with the scores; nil when there is none). The transaction first locks the workspace's
// recomputations (one at a time: two side by side could each overwrite the
// other's fresher pair with one read from an older text), then the analysis
// (a change in flight is waited for and seen; a change after it queues a job
// River no longer counts as a duplicate). Candidates are the analyses sharing
// a term, read from the workspace's postings: never another workspace, never
// the whole one.
func (s Store) RecomputeSimilar(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID,
	complete func(pgx.Tx) error) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`insert into rrca_similarity_locks (workspace_id) values ($1)
			on conflict (workspace_id) do nothing`, ws)
		b.Queue("select workspace_id from rrca_similarity_locks where workspace_id = $1 for update", ws)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		me, version, archived, err := profileOf(ctx, tx, ws, id, true)
		if err != nil {
			return err
		}
		var pairs map[uuid.UUID]float64
		if !archived {
			if pairs, err = neighbours(ctx, tx, ws, id, me); err != nil {
				return err
			}
		}
		b = &pgx.Batch{}
		b.Queue("delete from rrca_similar where workspace_id = $1 and rrca_id = $2", ws, id)
		b.Queue("delete from rrca_similar where workspace_id = $1 and similar_id = $2", ws, id)
		rows := make([][]any, 0, len(pairs))
		for other, score := range pairs {
			rows = append(rows, []any{id, other, score})
		}
		queueValues(b, "insert into rrca_similar (workspace_id, rrca_id, similar_id, score) values ", ws, rows)
		b.Queue("delete from rrca_terms where workspace_id = $1 and rrca_id = $2", ws, id)
		if !archived {
			rows = rows[:0]
			for _, term := range me.Terms() {
				rows = append(rows, []any{id, term, float32(me.Symptom.W[term]), float32(me.Mechanism.W[term]),
					float32(me.Symptom.L2), float32(me.Symptom.L1), float32(me.Mechanism.L2), float32(me.Mechanism.L1)})
			}
			queueValues(b, `insert into rrca_terms (workspace_id, rrca_id, term, symptom, mechanism,
				symptom_l2, symptom_l1, mechanism_l2, mechanism_l1) values `, ws, rows)
		}
		b.Queue(`insert into rrca_similarity (workspace_id, rrca_id, version) values ($1, $2, $3)
			on conflict (workspace_id, rrca_id) do update
			set version = excluded.version, computed_at = excluded.computed_at`,
			ws, id, version)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if complete != nil {
			return complete(tx)
		}
		return nil
	})
}

// pairsOf is the pairs of analysis $2 of workspace $1 as (other, score,
// computed_at). A pair is one row, stored by the analysis whose
// recomputation wrote it last: writing both directions made every
// recomputation insert twice the rows, the second half scattered over the
// whole table's index, which at 10,000 analyses (some 560 neighbours each)
// was most of its cost. Pairs written before, in both directions with one
// score, are read once; a recomputation of either analysis replaces them.
const pairsOf = `(select distinct on (other) other, score, computed_at from (
		select similar_id as other, score, computed_at from rrca_similar where workspace_id = $1 and rrca_id = $2
		union all
		select rrca_id, score, computed_at from rrca_similar where workspace_id = $1 and similar_id = $2) p
	order by other, computed_at desc)`

// valuesChunk is how many rows one INSERT of queueValues carries.
const valuesChunk = 500

// queueValues queues insert (which ends in "values ") for rows, each row's
// values after the workspace ($1), as multi-row VALUES of valuesChunk rows at
// most: one statement a chunk, where a statement a row cost PostgreSQL most of
// a recomputation.
func queueValues(b *pgx.Batch, insert string, ws uuid.UUID, rows [][]any) {
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), valuesChunk)]
		rows = rows[len(chunk):]
		var sql strings.Builder
		sql.WriteString(insert)
		args := []any{ws}
		for i, row := range chunk {
			if i > 0 {
				sql.WriteString(", ")
			}
			sql.WriteString("($1")
			for _, v := range row {
				args = append(args, v)
				sql.WriteString(", $" + strconv.Itoa(len(args)))
			}
			sql.WriteString(")")
		}
		b.Queue(sql.String(), args...)
	}
}

// neighbours scores the analysis against every other analysis of the
// workspace that shares one of its terms (the postings of its own terms) and
// answers those at MinSimilar or more. Each candidate is scored from the
// sums over the terms it shares (suggest.Shared) as its postings stream in:
// at 10,000 analyses a recomputation reads some 18,000 postings of a few
// thousand candidates, and building each candidate's profile cost more
// than reading them.
func neighbours(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID, me suggest.Profile) (map[uuid.UUID]float64, error) {
	terms := me.Terms()
	if len(terms) == 0 {
		return nil, nil
	}
	// One index lookup a term (the terms as a relation to join): with
	// t.term = any($2) PostgreSQL read every posting of the workspace and
	// compared each with the whole array, 43 ms at 1,000 analyses. The
	// term comes back as its place in $2.
	rows, err := tx.Query(ctx, `select t.rrca_id, q.i::int4, t.symptom, t.mechanism,
			t.symptom_l2, t.symptom_l1, t.mechanism_l2, t.mechanism_l1
		from unnest($2::text[]) with ordinality as q(term, i)
		join rrca_terms t on t.workspace_id = $1 and t.term = q.term
		where t.workspace_id = $1 and t.rrca_id <> $3`, ws, terms, id)
	if err != nil {
		return nil, err
	}
	mySymptom, myMechanism := make([]float64, len(terms)), make([]float64, len(terms))
	for i, t := range terms {
		mySymptom[i], myMechanism[i] = me.Symptom.W[t], me.Mechanism.W[t]
	}
	type candidate struct {
		shared suggest.Shared
		norms  suggest.Norms
	}
	others := map[uuid.UUID]*candidate{}
	var other uuid.UUID
	var i int32
	var sw, mw, sl2, sl1, ml2, ml1 float32
	_, err = pgx.ForEachRow(rows, []any{&other, &i, &sw, &mw, &sl2, &sl1, &ml2, &ml1}, func() error {
		if i < 1 || int(i) > len(terms) {
			return errors.New("rrca: a posting of a term not asked for")
		}
		c := others[other]
		if c == nil {
			c = &candidate{norms: suggest.Norms{SymptomL2: float64(sl2), SymptomL1: float64(sl1),
				MechanismL2: float64(ml2), MechanismL1: float64(ml1)}}
			others[other] = c
		}
		c.shared.Add(mySymptom[i-1], myMechanism[i-1], float64(sw), float64(mw))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]float64{}
	mine := me.Norms()
	for other, c := range others {
		if score := c.shared.Score(mine, c.norms); score >= MinSimilar {
			out[other] = score
		}
	}
	return out, nil
}

// Stale lists the analyses of the workspace whose neighbours lag behind a
// change older than age: a similarity job lost or discarded, or analyses
// from before the profiles. The maintenance job queues them again.
func (s Store) Stale(ctx context.Context, tx pgx.Tx, ws uuid.UUID, age time.Duration) ([]uuid.UUID, error) {
	return storekit.IDs(tx.Query(ctx, `select a.id from rrca_analyses a
		left join rrca_similarity s on s.workspace_id = a.workspace_id and s.rrca_id = a.id and s.workspace_id = $1
		where a.workspace_id = $1 and a.similarity_version > coalesce(s.version, 0)
		and a.updated_at < now() - $2::interval
		order by a.id`, ws, age))
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
	ComputedAt *time.Time `json:"computedAt" doc:"When this analysis's own recomputation last ran; null when never"`
	// Pending says the analysis changed since: a recomputation is due.
	Pending bool `json:"pending" doc:"The analysis changed since computedAt: its recomputation is due; the list may change"`
}

// Similar returns the analysis's neighbours, best first, when they were
// computed and whether a change is still to be computed.
func (s Store) Similar(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, limit int) (SimilarList, error) {
	out := SimilarList{Items: []SimilarItem{}}
	err := readAnalysis(ctx, shard, ws, id, func(b *pgx.Batch) {
		b.Queue(`select a.id, a.title, a.project_id, a.phase, s.score, s.computed_at
			from `+pairsOf+` s join rrca_analyses a on a.workspace_id = $1 and a.id = s.other
			where a.workspace_id = $1 and a.archived_at is null
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
		b.Queue(`select s.computed_at, a.similarity_version > coalesce(s.version, 0) from rrca_analyses a
			left join rrca_similarity s on s.workspace_id = a.workspace_id and s.rrca_id = a.id and s.workspace_id = $1
			where a.workspace_id = $1 and a.id = $2`, ws, id).
			QueryRow(func(r pgx.Row) error {
				// No row: the analysis is not the workspace's, which
				// readAnalysis answers as not found.
				if err := r.Scan(&out.ComputedAt, &out.Pending); !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
				return nil
			})
	})
	return out, err
}
