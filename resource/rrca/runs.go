package rrca

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
	"github.com/pmapi/pmapi/tenant"
)

// Run kinds and statuses.
const (
	RunFiveWhy    = "FIVE_WHY"
	RunLookAcross = "LOOK_ACROSS"
	RunPending    = "PENDING"
	RunReady      = "READY"
	RunFailed     = "FAILED"
)

// Run is a suggestion run.
type Run struct {
	ID          uuid.UUID
	RRCAID      uuid.UUID
	Kind        string
	Status      string
	Error       *string
	CreatedAt   time.Time
	CompletedAt *time.Time
	// Whys are what a 5-why run suggested, with their evidence.
	Whys []WhyView
}

// WhyView is one suggestion of a 5-why run: the node it wrote, how confident
// the engine was and what it rests on.
type WhyView struct {
	NodeID string `json:"nodeId" doc:"The WHY_SUGGESTION node written"`
	Text   string `json:"text"`
	// Confidence is 0 to 1: the share of the similar analyses' weight
	// that says this.
	Confidence float64 `json:"confidence" doc:"0 to 1: the share of the similar analyses' weight saying this"`
	// Evidence is what it rests on: nodes of similar analyses (with their
	// analysis), and risks or tasks, best first.
	Evidence []suggest.Candidate `json:"evidence" doc:"Nodes of similar analyses, and risks or tasks, best first"`
}

// RunView is a suggestion run in the API; a READY 5-why run lists its nodes.
type RunView struct {
	ID          string     `json:"id" example:"run_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	RRCAID      string     `json:"rrcaId"`
	Kind        string     `json:"kind" enum:"FIVE_WHY,LOOK_ACROSS"`
	Status      string     `json:"status" enum:"PENDING,READY,FAILED"`
	Error       *string    `json:"error"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt"`
	Nodes       []NodeView `json:"nodes" doc:"The WHY_SUGGESTION nodes the run wrote (5-why runs)"`
	// Suggestions are what a 5-why run suggested, each with its confidence
	// and evidence: none when nothing was alike enough (and for look-across).
	Suggestions []WhyView `json:"suggestions" doc:"A 5-why run's suggestions with confidence and evidence; may be empty"`
}

// ToRunView converts a run.
func ToRunView(r Run, nodes []Node) RunView {
	whys := r.Whys
	if whys == nil {
		whys = []WhyView{}
	}
	return RunView{
		ID:          pmapi.FormatID(RunIDPrefix, r.ID),
		RRCAID:      pmapi.FormatID(IDPrefix, r.RRCAID),
		Kind:        r.Kind,
		Status:      r.Status,
		Error:       r.Error,
		CreatedAt:   r.CreatedAt,
		CompletedAt: r.CompletedAt,
		Nodes:       api.Views(nodes, ToNodeView),
		Suggestions: whys,
	}
}

// toNewRunView converts a run just queued: it has written nothing yet.
func toNewRunView(r Run) RunView { return ToRunView(r, nil) }

const runColumns = "id, rrca_id, kind, status, error, created_at, completed_at, suggestions"

func scanRun(row pgx.Row) (Run, error) {
	var r Run
	var whys []byte
	err := row.Scan(&r.ID, &r.RRCAID, &r.Kind, &r.Status, &r.Error, &r.CreatedAt, &r.CompletedAt, &whys)
	if err == nil {
		err = json.Unmarshal(whys, &r.Whys)
	}
	return r, storekit.Found(err, "suggestion run")
}

// CreateRun queues a suggestion run of kind for the analysis.
func (s Store) CreateRun(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, kind string) (Run, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (r Run, err error) {
		if _, err := get(ctx, tx, ws, id, false); err != nil {
			return r, err
		}
		r, err = scanRun(
			tx.QueryRow(ctx, `insert into rrca_suggestion_runs (workspace_id, id, rrca_id, kind) values ($1, $2, $3, $4)
			returning `+runColumns, ws, pmapi.NewID(), id, kind),
		)
		if err != nil {
			return r, err
		}
		return r, s.Jobs.Suggest(ctx, tx, shard, ws, r.ID)
	})
}

// GetRun returns a run of the analysis with the nodes it wrote.
func (s Store) GetRun(ctx context.Context, shard *tenant.Shard, ws, id, runID uuid.UUID) (Run, []Node, error) {
	var r Run
	var nodes []Node
	var runErr error
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+runColumns+" from rrca_suggestion_runs"+
			" where workspace_id = $1 and rrca_id = $2 and id = $3", ws, id, runID).
			QueryRow(func(row pgx.Row) error {
				r, runErr = scanRun(row)
				if pmapi.ErrorCode(runErr) == pmapi.CodeNotFound {
					return nil
				}
				return runErr
			})
		storekit.QueueRows(b, &nodes, scanNode, "select "+nodeColumns+" from rrca_nodes n"+
			" where n.workspace_id = $1 and n.rrca_id = $2 and n.suggestion_run_id = $3 order by n.id", ws, id, runID)
	})
	if err == nil {
		err = runErr
	}
	return r, nodes, err
}

// RunInfo is what a worker needs to know about a run.
func (s Store) RunInfo(ctx context.Context, shard *tenant.Shard, ws, runID uuid.UUID) (Run, error) {
	return storekit.Get(
		ctx,
		shard,
		ws,
		scanRun,
		"select "+runColumns+" from rrca_suggestion_runs where workspace_id = $1 and id = $2",
		ws,
		runID,
	)
}

// FailRun marks a run FAILED with the reason.
func (s Store) FailRun(ctx context.Context, shard *tenant.Shard, ws, runID uuid.UUID, reason string) error {
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `update rrca_suggestion_runs set status = 'FAILED', error = $3, completed_at = now()
			where workspace_id = $1 and id = $2 and status = 'PENDING'`, ws, runID, reason)
		return err
	})
}

// RunFiveWhy works a 5-why run: it reads the analysis's nodes (their depth
// in the why chain and their lexemes), its closest similar analyses with the
// nodes that say why their problem happened, and the workspace's risks and
// tasks that match the problem; asks the engine; and writes each pick as a
// WHY_SUGGESTION node under the deepest WHY, keeping the picks' confidence
// and evidence on the run.
func (s Store) RunFiveWhy(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	run Run,
	engine suggest.Engine,
) error {
	return s.work(ctx, shard, ws, run, func(tx pgx.Tx, a Analysis) error {
		in := suggest.WhyInput{Problem: a.Title + ". " + a.ProblemStatement}
		own, err := problemAndNodes(ctx, tx, ws, a.ID, &in.ProblemTerms)
		if err != nil {
			return err
		}
		var deepest *nodeText
		for i, n := range own {
			in.Existing = append(in.Existing, n.Body)
			in.Own = append(in.Own, suggest.Node{ID: n.ID.String(), Kind: n.Kind, Depth: n.Depth, Text: n.Body,
				Terms: n.Terms})
			if n.Kind == KindWhy && (deepest == nil || n.Depth > deepest.Depth) {
				deepest = &own[i]
			}
		}
		if in.Similar, err = s.similarNodes(ctx, tx, ws, a.ID); err != nil {
			return err
		}
		focus := in.Problem
		var parent *uuid.UUID
		if deepest != nil {
			focus, parent = deepest.Body+". "+in.Problem, &deepest.ID
		}
		if len(s.Sources.Candidates) > 0 {
			rows, err := tx.Query(ctx, `select c.type, c.id, c.title, rrca_text_similarity($2, c.doc),
				tsvector_to_array(to_tsvector('english'::regconfig, c.doc)) from (`+s.Sources.candidates("")+`) c
				order by 4 desc limit 20`, ws, focus)
			if err != nil {
				return err
			}
			if in.Candidates, err = s.Sources.candidateRows(rows); err != nil {
				return err
			}
		}
		picks, err := engine.FiveWhy(ctx, in)
		if err != nil {
			return err
		}
		whys := make([]WhyView, 0, len(picks))
		for _, p := range picks {
			id := pmapi.NewID()
			_, err := tx.Exec(ctx, `insert into rrca_nodes
				(workspace_id, id, rrca_id, parent_id, kind, text, suggestion_run_id)
				values ($1, $2, $3, $4, 'WHY_SUGGESTION', $5, $6)`,
				ws, id, a.ID, parent, clip(p.Text, 5000), run.ID)
			if err != nil {
				return err
			}
			whys = append(whys, WhyView{NodeID: pmapi.FormatID(NodeIDPrefix, id), Text: clip(p.Text, 5000),
				Confidence: p.Confidence, Evidence: s.Sources.formatEvidence(p.Evidence)})
		}
		raw, err := json.Marshal(whys)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "update rrca_suggestion_runs set suggestions = $3 where workspace_id = $1 and id = $2",
			ws, run.ID, raw)
		return err
	})
}

// maxSimilarForSuggestions is how many of an analysis's neighbours a 5-why
// run reads the nodes of.
const maxSimilarForSuggestions = 10

// similarNodes reads the analysis's closest neighbours, best first, with
// their WHY, CAUSE, ROOT_CAUSE and CONTRIBUTING_FACTOR nodes (a WHY's depth
// counts the WHYs above it).
func (s Store) similarNodes(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID) ([]suggest.Similar, error) {
	rows, err := tx.Query(ctx, `select s.other, a.title, s.score
		from `+pairsOf+` s join rrca_analyses a on a.workspace_id = $1 and a.id = s.other
		where a.workspace_id = $1 and a.archived_at is null
		order by s.score desc, s.other limit $3`,
		ws, id, maxSimilarForSuggestions)
	if err != nil {
		return nil, err
	}
	var out []suggest.Similar
	var ids []uuid.UUID
	for rows.Next() {
		var sid uuid.UUID
		var sim suggest.Similar
		if err := rows.Scan(&sid, &sim.Title, &sim.Score); err != nil {
			return nil, err
		}
		sim.ID = sid.String()
		out, ids = append(out, sim), append(ids, sid)
	}
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	rows, err = tx.Query(ctx, `select n.rrca_id, n.id, n.parent_id, n.kind, n.text,
			tsvector_to_array(to_tsvector('english'::regconfig, n.text))
		from rrca_nodes n where n.workspace_id = $1 and n.rrca_id = any($2)
		and n.kind in ('WHY', 'CAUSE', 'ROOT_CAUSE', 'CONTRIBUTING_FACTOR') order by n.id`, ws, ids)
	if err != nil {
		return nil, err
	}
	byAnalysis := map[string]int{}
	for i, sim := range out {
		byAnalysis[sim.ID] = i
	}
	parents := map[uuid.UUID]*uuid.UUID{}
	kinds := map[uuid.UUID]string{}
	type row struct {
		analysis int
		id       uuid.UUID
		node     suggest.Node
	}
	var all []row
	for rows.Next() {
		var r row
		var rid uuid.UUID
		var parent *uuid.UUID
		if err := rows.Scan(&rid, &r.id, &parent, &r.node.Kind, &r.node.Text, &r.node.Terms); err != nil {
			return nil, err
		}
		r.analysis, r.node.ID = byAnalysis[rid.String()], r.id.String()
		parents[r.id], kinds[r.id] = parent, r.node.Kind
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.node.Kind == KindWhy {
			r.node.Depth = 1
			for p := parents[r.id]; p != nil && r.node.Depth <= len(all); p = parents[*p] {
				if kinds[*p] == KindWhy {
					r.node.Depth++
				}
			}
		}
		out[r.analysis].Nodes = append(out[r.analysis].Nodes, r.node)
	}
	return out, nil
}

// candidateRows reads (type, id, title, score, terms) candidate rows.
func (s Sources) candidateRows(rows pgx.Rows) ([]suggest.Candidate, error) {
	var out []suggest.Candidate
	for rows.Next() {
		var c suggest.Candidate
		var id uuid.UUID
		if err := rows.Scan(&c.Type, &id, &c.Title, &c.Score, &c.Terms); err != nil {
			return nil, err
		}
		c.ID = pmapi.FormatID(s.prefix(c.Type), id)
		out = append(out, c)
	}
	return out, rows.Err()
}

// formatEvidence gives the nodes and analyses an engine names (by their
// UUIDs) their API ids; records keep theirs.
func (s Sources) formatEvidence(in []suggest.Candidate) []suggest.Candidate {
	out := make([]suggest.Candidate, len(in))
	for i, c := range in {
		if id, err := uuid.Parse(c.ID); err == nil {
			c.ID = pmapi.FormatID(s.prefix(c.Type), id)
		}
		if id, err := uuid.Parse(c.RRCAID); err == nil {
			c.RRCAID = pmapi.FormatID(IDPrefix, id)
		}
		out[i] = c
	}
	return out
}

// work works a run in one transaction: do reads the analysis's input, asks
// the engine and writes its answer; the run is then READY and
// rrca.suggestions_ready emitted, or, when do fails, nothing is written.
func (s Store) work(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	run Run,
	do func(pgx.Tx, Analysis) error,
) error {
	if err := s.Sources.check(); err != nil {
		return err
	}
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		a, err := get(ctx, tx, ws, run.RRCAID, true)
		if err != nil {
			return err
		}
		if err := do(tx, a); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `update rrca_suggestion_runs set status = 'READY', completed_at = now()
			where workspace_id = $1 and id = $2`, ws, run.ID)
		if err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.suggestions_ready",
			Data: RunEvent{
				RRCAID: pmapi.FormatID(IDPrefix, run.RRCAID),
				RunID:  pmapi.FormatID(RunIDPrefix, run.ID),
				Kind:   run.Kind,
			}})
	})
}

// texts reads a query's single text column.
func texts(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RunEvent is the data of rrca.suggestions_ready.
type RunEvent struct {
	RRCAID string `json:"rrcaId"`
	RunID  string `json:"runId"`
	Kind   string `json:"kind" enum:"FIVE_WHY,LOOK_ACROSS"`
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// problemAndNodes reads the stemmed terms of an analysis's title and problem
// statement into *terms (what both runs match the workspace's text against)
// and answers its nodes (nodeTexts).
func problemAndNodes(ctx context.Context, tx pgx.Tx, ws, id uuid.UUID, terms *[]string) ([]nodeText, error) {
	if err := tx.QueryRow(ctx, `select
			tsvector_to_array(to_tsvector('english'::regconfig, a.title || ' ' || a.problem_statement))
		from rrca_analyses a where a.workspace_id = $1 and a.id = $2`, ws, id).Scan(terms); err != nil {
		return nil, err
	}
	return nodeTexts(ctx, tx, ws, id)
}

// RunLookAcross works a look-across run (yokoten): the analysis's root causes
// and contributing factors are matched against the risks and tasks of every
// other live project of the workspace and against the mechanisms of the
// analyses there (those sharing a mechanism term, read from the workspace's
// postings); the engine turns the matches into one suggestion per target
// project, carrying the corrective actions to adapt.
func (s Store) RunLookAcross(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	run Run,
	engine suggest.Engine,
) error {
	return s.work(ctx, shard, ws, run, func(tx pgx.Tx, a Analysis) error {
		var in suggest.LookAcrossInput
		own, err := problemAndNodes(ctx, tx, ws, a.ID, &in.Symptom)
		if err != nil {
			return err
		}
		var terms []string
		for _, kind := range []string{KindRootCause, KindContributingFactor} {
			for _, n := range own {
				if n.Kind == kind {
					in.RootCauses = append(in.RootCauses, n.Body)
					in.Mechanism = append(in.Mechanism, suggest.Node{ID: n.ID.String(), Kind: n.Kind, Text: n.Body,
						Terms: n.Terms})
					terms = append(terms, n.Terms...)
				}
			}
		}
		if len(in.RootCauses) == 0 {
			in.RootCauses = []string{a.Title + ". " + a.ProblemStatement}
			terms = in.Symptom
		}
		in.Actions, err = texts(ctx, tx, `select coalesce(i.title, c.title) from corrective_actions c `+s.Sources.itemJoin()+`
			where c.workspace_id = $1 and c.rrca_id = $2 order by c.id`, ws, a.ID)
		if err != nil {
			return err
		}
		// Every other live project, in a stable order.
		rows, err := tx.Query(ctx, `select p.id, p.name from `+s.Sources.liveProjects()+` p order by p.id`, ws)
		if err != nil {
			return err
		}
		byProject := map[uuid.UUID]*suggest.ProjectCandidates{}
		var order []uuid.UUID
		for rows.Next() {
			var pid uuid.UUID
			var name string
			if err := rows.Scan(&pid, &name); err != nil {
				return err
			}
			if a.ProjectID == nil || pid != *a.ProjectID {
				byProject[pid] = &suggest.ProjectCandidates{ProjectID: pid.String(), Name: name}
				order = append(order, pid)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		add := func(pid *uuid.UUID, c suggest.Candidate) {
			if pid != nil && byProject[*pid] != nil {
				byProject[*pid].Items = append(byProject[*pid].Items, c)
			}
		}
		if len(s.Sources.Candidates) > 0 {
			rows, err := tx.Query(ctx, `select c.type, c.id, c.project_id, c.title,
					tsvector_to_array(to_tsvector('english'::regconfig, c.doc))
				from (`+s.Sources.candidates("")+`) c`, ws)
			if err != nil {
				return err
			}
			for rows.Next() {
				var c suggest.Candidate
				var id uuid.UUID
				var pid *uuid.UUID
				if err := rows.Scan(&c.Type, &id, &pid, &c.Title, &c.Terms); err != nil {
					return err
				}
				c.ID = pmapi.FormatID(s.Sources.prefix(c.Type), id)
				add(pid, c)
			}
			if err := rows.Err(); err != nil {
				return err
			}
		}
		// The other analyses that share a mechanism term, with all their
		// mechanism terms.
		rows, err = tx.Query(ctx, `select x.id, x.project_id, x.title, array_agg(t.term order by t.term)
			from rrca_terms t join rrca_analyses x on x.workspace_id = t.workspace_id and x.id = t.rrca_id
			where t.workspace_id = $1 and x.workspace_id = $1 and t.mechanism > 0 and x.id <> $2
			and x.archived_at is null and t.rrca_id in (select m.rrca_id from unnest($3::text[]) as q(term)
				join rrca_terms m on m.workspace_id = $1 and m.term = q.term
				where m.workspace_id = $1 and m.mechanism > 0)
			group by x.id, x.project_id, x.title order by x.id`, ws, a.ID, terms)
		if err != nil {
			return err
		}
		for rows.Next() {
			c := suggest.Candidate{Type: "rrca"}
			var id uuid.UUID
			var pid *uuid.UUID
			if err := rows.Scan(&id, &pid, &c.Title, &c.Terms); err != nil {
				return err
			}
			c.ID = pmapi.FormatID(IDPrefix, id)
			add(pid, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, pid := range order {
			in.Projects = append(in.Projects, *byProject[pid])
		}
		sugs, err := engine.LookAcross(ctx, in)
		if err != nil {
			return err
		}
		for _, sg := range sugs {
			target, err := uuid.Parse(sg.ProjectID)
			if err != nil {
				return err
			}
			evidence, _ := json.Marshal(sg.Evidence)
			actions, _ := json.Marshal(sg.Actions)
			if _, err := tx.Exec(ctx, `insert into look_across_suggestions
				(workspace_id, id, rrca_id, run_id, target_project_id, mechanism, evidence, actions, score)
				values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				ws, pmapi.NewID(), a.ID, run.ID, target, clip(sg.Mechanism, 5000), evidence, actions, sg.Score); err != nil {
				return err
			}
		}
		return nil
	})
}

// SuggestionView is a look-across suggestion.
type SuggestionView struct {
	ID              string              `json:"id" example:"lac_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	RRCAID          string              `json:"rrcaId"`
	RunID           string              `json:"runId"`
	TargetProjectID string              `json:"targetProjectId"`
	Mechanism       string              `json:"mechanism" doc:"The failure mechanism (root causes) looked for"`
	Evidence        []suggest.Candidate `json:"evidence" doc:"The target project's matching risks, tasks and analyses, best first"`
	Actions         []string            `json:"actions" doc:"The corrective actions to adapt; apply creates one action item each"`
	Score           float64             `json:"score"`
	Status          string              `json:"status" enum:"PROPOSED,APPLIED,REJECTED"`
	Reason          *string             `json:"reason" doc:"Why it was rejected"`
	DecidedAt       *time.Time          `json:"decidedAt"`
	CreatedAt       time.Time           `json:"createdAt"`
}

// SuggestionList is an analysis's look-across suggestions, best first.
type SuggestionList api.PageOf[SuggestionView]

// suggestionKey is a suggestion's place in its list (best first, so not in
// id order): its id.
func suggestionKey(v SuggestionView) string { return v.ID }

const suggestionColumns = "id, rrca_id, run_id, target_project_id, mechanism, evidence, actions, score, status, " +
	"reason, decided_at, created_at"

func scanSuggestion(row pgx.Row) (SuggestionView, uuid.UUID, error) {
	var v SuggestionView
	var id, rid, run, target uuid.UUID
	var evidence, actions []byte
	err := row.Scan(
		&id,
		&rid,
		&run,
		&target,
		&v.Mechanism,
		&evidence,
		&actions,
		&v.Score,
		&v.Status,
		&v.Reason,
		&v.DecidedAt,
		&v.CreatedAt,
	)
	if err := storekit.Found(err, "suggestion"); err != nil {
		return v, target, err
	}
	v.ID, v.RRCAID, v.RunID, v.TargetProjectID = pmapi.FormatID(
		SuggestionIDPrefix,
		id,
	), pmapi.FormatID(
		IDPrefix,
		rid,
	), pmapi.FormatID(
		RunIDPrefix,
		run,
	), pmapi.FormatID(
		project.IDPrefix,
		target,
	)
	if err := json.Unmarshal(evidence, &v.Evidence); err != nil {
		return v, target, err
	}
	return v, target, json.Unmarshal(actions, &v.Actions)
}

// lockSuggestionSQL reads a suggestion and locks it: applying and rejecting are
// final, so the second of two concurrent decisions must see the first.
const lockSuggestionSQL = "select " + suggestionColumns + " from look_across_suggestions" +
	" where workspace_id = $1 and rrca_id = $2 and id = $3 for update"

// Suggestions lists an analysis's look-across suggestions.
func (s Store) Suggestions(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) ([]SuggestionView, error) {
	var out []SuggestionView
	err := readAnalysis(ctx, shard, ws, id, func(b *pgx.Batch) {
		storekit.QueueRows(b, &out, func(row pgx.Row) (SuggestionView, error) {
			v, _, err := scanSuggestion(row)
			return v, err
		}, "select "+suggestionColumns+" from look_across_suggestions"+
			" where workspace_id = $1 and rrca_id = $2 order by score desc, id", ws, id)
	})
	return out, err
}

// Apply accepts a suggestion: one action item per action (source LOOK_ACROSS)
// in the target project, with the owner hint and due date given. Final: a
// decided suggestion is CONFLICT.
func (s Store) Apply(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id, sugID uuid.UUID,
	ownerHint *string,
	due *time.Time,
) (SuggestionView, []actionitem.Item, error) {
	var v SuggestionView
	var items []actionitem.Item
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		items = nil
		cur, target, err := scanSuggestion(tx.QueryRow(ctx, lockSuggestionSQL, ws, id, sugID))
		if err != nil {
			return err
		}
		if cur.Status != "PROPOSED" {
			return pmapi.Errorf(pmapi.CodeConflict, "the suggestion is already %s", cur.Status)
		}
		actions := cur.Actions
		if len(actions) == 0 {
			actions = []string{"Check for: " + clip(cur.Mechanism, 280)}
		}
		for _, title := range actions {
			desc := "Look-across from analysis " + cur.RRCAID + ": " + cur.Mechanism
			it, err := s.ActionItems.CreateTx(ctx, tx, shard, ws, actionitem.NewItem{
				Title: clip(title, 300), Description: &desc, OwnerHint: ownerHint, DueDate: due, ProjectID: &target,
				Source: actionitem.SourceLookAcross, SourceRRCAID: &id, SourceSuggestionID: &sugID,
			})
			if err != nil {
				return err
			}
			items = append(items, it)
		}
		v, _, err = scanSuggestion(tx.QueryRow(ctx, `update look_across_suggestions
			set status = 'APPLIED', decided_at = now()
			where workspace_id = $1 and id = $2 returning `+suggestionColumns, ws, sugID))
		if err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.look_across_applied", Data: v})
	})
	return v, items, err
}

// Reject records why a suggestion was turned down. Final, like Apply.
func (s Store) Reject(
	ctx context.Context,
	shard *tenant.Shard,
	ws, id, sugID uuid.UUID,
	reason string,
) (SuggestionView, error) {
	return storekit.Tx(ctx, shard, ws, func(tx pgx.Tx) (v SuggestionView, err error) {
		cur, _, err := scanSuggestion(tx.QueryRow(ctx, lockSuggestionSQL, ws, id, sugID))
		if err != nil {
			return v, err
		}
		if cur.Status != "PROPOSED" {
			return v, pmapi.Errorf(pmapi.CodeConflict, "the suggestion is already %s", cur.Status)
		}
		v, _, err = scanSuggestion(tx.QueryRow(ctx, `update look_across_suggestions
			set status = 'REJECTED', reason = $3, decided_at = now()
			where workspace_id = $1 and id = $2 returning `+suggestionColumns, ws, sugID, reason))
		if err != nil {
			return v, err
		}
		return v, s.Events.Emit(ctx, tx, shard, ws, event.Event{Type: "rrca.look_across_rejected", Data: v})
	})
}

// EventTypes documents the events analyses emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "rrca.created", Description: "An analysis is started", Payload: View{}},
		{Name: "rrca.updated", Description: "An analysis's title or problem statement changes", Payload: View{}},
		{Name: "rrca.advanced", Description: "An analysis moves to its next phase", Payload: PhaseEvent{}},
		{Name: "rrca.archived", Description: "An analysis is archived", Payload: View{}},
		{Name: "rrca.restored", Description: "An archived analysis is restored", Payload: View{}},
		{Name: "rrca.node_added", Description: "A node is added (or a suggestion accepted)", Payload: NodeEvent{}},
		{Name: "rrca.node_deleted", Description: "A node and its subtree are deleted", Payload: NodeEvent{}},
		{
			Name:        "rrca.corrective_action_added",
			Description: "A corrective action is emitted (with its action item)",
			Payload:     CorrectiveActionView{},
		},
		{Name: "rrca.suggestions_ready", Description: "A 5-why or look-across run finished", Payload: RunEvent{}},
		{Name: "rrca.look_across_applied", Description: "A look-across suggestion is applied", Payload: SuggestionView{}},
		{Name: "rrca.look_across_rejected", Description: "A look-across suggestion is rejected", Payload: SuggestionView{}},
		{Name: "rrca.deleted", Description: "An analysis is deleted with its project", Payload: DeletedEvent{}},
	}
}
