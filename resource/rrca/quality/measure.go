package quality

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"
)

// Ranking is how GET .../similar ranked the true twins of one set's queries
// of one split, among the base analyses.
type Ranking struct {
	Split   string  `json:"split"`
	Set     string  `json:"set"`
	N       int     `json:"n"`
	Top1    float64 `json:"top1"`
	Recall5 float64 `json:"recall5"`
	MRR     float64 `json:"mrr"`
	// Misses are the queries whose twin was not first, with what was.
	Misses []string `json:"misses,omitempty"`
}

// Suggestions is how precise one split's suggestion runs of a kind were.
type Suggestions struct {
	Split string `json:"split"`
	Kind  string `json:"kind"` // 5-why or look-across
	Runs  int    `json:"runs"`
	// Silent counts the runs that suggested nothing.
	Silent    int `json:"silent"`
	Suggested int `json:"suggested"`
	Relevant  int `json:"relevant"`
	// Restated counts 5-why suggestions that say again what the analysis
	// already has (the first WHY of its own mechanism).
	Restated int `json:"restated"`
	// Possible is, for look-across, how many target projects hold the
	// mechanism (the recall's denominator).
	Possible  int      `json:"possible,omitempty"`
	Precision float64  `json:"precision"`
	Recall    float64  `json:"recall,omitempty"`
	Wrong     []string `json:"wrong,omitempty"`
}

// Report is one benchmark run.
type Report struct {
	Analyses    int           `json:"analyses"`
	Rankings    []Ranking     `json:"rankings"`
	Suggestions []Suggestions `json:"suggestions"`
	// Before are the rankings of the former ranking (Before), when measured.
	Before []Ranking `json:"before,omitempty"`
}

// Ranking returns the ranking of split and set.
func (r Report) Ranking(split, set string) Ranking { return find(r.Rankings, split, set) }

// BeforeRanking returns the former ranking's of split and set.
func (r Report) BeforeRanking(split, set string) Ranking { return find(r.Before, split, set) }

func find(rs []Ranking, split, set string) Ranking {
	for _, x := range rs {
		if x.Split == split && x.Set == set {
			return x
		}
	}
	return Ranking{Split: split, Set: set}
}

// Suggestion returns the suggestion measures of split and kind.
func (r Report) Suggestion(split, kind string) Suggestions {
	for _, x := range r.Suggestions {
		if x.Split == split && x.Kind == kind {
			return x
		}
	}
	return Suggestions{Split: split, Kind: kind}
}

// Run loads the dataset into two workspaces, one through each API (the full
// queries through full, the early ones through early: Dataset.Worlds), waits
// for every similar list, and measures: the rankings of every query, a 5-why
// run for every early query, and a look-across run for every base analysis
// (in the full world, where the other write-ups of its mechanism are).
func Run(ctx context.Context, full, early API, ds Dataset, within time.Duration) (Report, error) {
	fullDS, earlyDS := ds.Worlds()
	worlds := []*World{NewWorld(full, fullDS), NewWorld(early, earlyDS)}
	reps := make([]Report, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, w := range worlds {
		wg.Go(func() {
			if errs[i] = w.Load(ctx); errs[i] != nil {
				return
			}
			if errs[i] = w.WaitComputed(ctx, within); errs[i] != nil {
				return
			}
			reps[i].Analyses = len(w.DS.Analyses)
			if errs[i] = w.rank(ctx, &reps[i]); errs[i] != nil {
				return
			}
			if i == 0 {
				errs[i] = w.lookAcross(ctx, &reps[i])
			} else {
				errs[i] = w.fiveWhy(ctx, &reps[i])
			}
		})
	}
	wg.Wait()
	rep := Report{Analyses: len(ds.Analyses)}
	for _, set := range QuerySets {
		for _, split := range splits() {
			for _, r := range reps {
				for _, x := range r.Rankings {
					if x.Set == set && x.Split == split {
						rep.Rankings = append(rep.Rankings, x)
					}
				}
			}
		}
	}
	rep.Suggestions = append(reps[1].Suggestions, reps[0].Suggestions...)
	return rep, errors.Join(errs...)
}

func splits() []string { return []string{SplitTune, SplitMeasure} }

func (w *World) rank(ctx context.Context, rep *Report) error {
	base := map[string]string{} // id -> key of the base analyses
	for _, a := range w.DS.Analyses {
		if a.Set == SetBase {
			base[w.ID(a.Key)] = a.Key
		}
	}
	for _, split := range splits() {
		for _, set := range QuerySets {
			r := Ranking{Split: split, Set: set}
			for _, q := range w.DS.Analyses {
				if q.Split != split || q.Set != set {
					continue
				}
				ids, err := w.similar(ctx, q.Key)
				if err != nil {
					return err
				}
				rank, first, n := 0, "", 0
				for _, id := range ids {
					k, ok := base[id]
					if !ok {
						continue
					}
					n++
					if first == "" {
						first = k
					}
					if k == q.Mech {
						rank = n
						break
					}
				}
				r.add(q.Key, first, rank)
			}
			if r.N > 0 {
				r.finish()
				rep.Rankings = append(rep.Rankings, r)
			}
		}
	}
	return nil
}

// fiveWhy works a 5-why run on every early query (title, problem and first
// WHY) and judges each suggestion by where its text came from: relevant when
// it is a node of an analysis of the query's mechanism and not that
// mechanism's first WHY (which the query has already said), or a record of
// the mechanism.
func (w *World) fiveWhy(ctx context.Context, rep *Report) error {
	var queries []Analysis
	for _, a := range w.DS.Analyses {
		if a.Set == SetHardNegativeEarly || a.Set == SetParaphraseEarly {
			queries = append(queries, a)
		}
	}
	runs, err := collect(ctx, w, queries, func(ctx context.Context, q Analysis) (map[string]any, error) {
		return w.run(ctx, q.Key, "5why")
	})
	if err != nil {
		return err
	}
	tally(rep, "5-why", queries, func(s *Suggestions, q Analysis) {
		nodes, _ := runs[q.Key]["nodes"].([]any)
		if len(nodes) == 0 {
			s.Silent++
		}
		for _, n := range nodes {
			m, _ := n.(map[string]any)
			text, _ := m["text"].(string)
			s.Suggested++
			switch w.judgeWhy(q, text) {
			case "relevant":
				s.Relevant++
			case "restated":
				s.Restated++
				s.Wrong = append(s.Wrong, fmt.Sprintf("%s restated: %q", q.Key, text))
			default:
				s.Wrong = append(s.Wrong, fmt.Sprintf("%s wrong: %q", q.Key, text))
			}
		}
	})
	return nil
}

// tally adds to rep, split by split, the Suggestions of kind over the runs of
// the analyses as of that split: score counts one analysis's run into them.
// A split without a run adds nothing.
func tally(rep *Report, kind string, as []Analysis, score func(s *Suggestions, a Analysis)) {
	for _, split := range splits() {
		s := Suggestions{Split: split, Kind: kind}
		for _, a := range as {
			if a.Split == split {
				s.Runs++
				score(&s, a)
			}
		}
		if s.Suggested > 0 {
			s.Precision = float64(s.Relevant) / float64(s.Suggested)
		}
		if s.Possible > 0 {
			s.Recall = float64(s.Relevant) / float64(s.Possible)
		}
		if s.Runs > 0 {
			rep.Suggestions = append(rep.Suggestions, s)
		}
	}
}

func (w *World) judgeWhy(q Analysis, text string) string {
	w.mu.Lock()
	srcs := w.texts[normal(text)]
	w.mu.Unlock()
	verdict := "wrong"
	for _, s := range srcs {
		if s.Mech != q.Mech {
			continue
		}
		if s.Kind == "WHY" && s.WhyIndex == 0 {
			verdict = "restated"
			continue
		}
		return "relevant"
	}
	return verdict
}

// lookAcross works a look-across run from every base analysis and judges
// each suggested project: right when one of its analyses or records (other
// than the source) shares the source's mechanism.
func (w *World) lookAcross(ctx context.Context, rep *Report) error {
	var sources []Analysis
	for _, a := range w.DS.Analyses {
		if a.Set == SetBase {
			sources = append(sources, a)
		}
	}
	type result struct {
		projects []string
		scores   []float64
	}
	results, err := collect(ctx, w, sources, func(ctx context.Context, a Analysis) (r result, err error) {
		run, err := w.run(ctx, a.Key, "look-across")
		if err != nil {
			return r, err
		}
		list, err := w.api.Call(ctx, "GET", rrcaBase+"/"+w.ID(a.Key)+"/look-across?limit=100", nil)
		if err != nil {
			return r, err
		}
		items, _ := list["items"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["runId"] != run["id"] {
				continue
			}
			pid, _ := m["targetProjectId"].(string)
			score, _ := m["score"].(float64)
			w.mu.Lock()
			r.projects = append(r.projects, w.keyOf[pid])
			r.scores = append(r.scores, score)
			w.mu.Unlock()
		}
		return r, nil
	})
	if err != nil {
		return err
	}
	holds := w.mechanismsByProject()
	tally(rep, "look-across", sources, func(s *Suggestions, a Analysis) {
		got, scores := results[a.Key].projects, results[a.Key].scores
		if len(got) == 0 {
			s.Silent++
		}
		for p, mechs := range holds {
			if p != a.Project && mechs[a.Mech] {
				s.Possible++
			}
		}
		for i, p := range got {
			s.Suggested++
			if holds[p][a.Mech] {
				s.Relevant++
			} else {
				s.Wrong = append(s.Wrong, fmt.Sprintf("%s -> %s (%.2f)", a.Key, p, scores[i]))
			}
		}
	})
	return nil
}

// mechanismsByProject is, per project key, the mechanisms its analyses and
// records hold, each analysis's own key aside (a source's own write-up).
func (w *World) mechanismsByProject() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(p, m string) {
		if out[p] == nil {
			out[p] = map[string]bool{}
		}
		out[p][m] = true
	}
	for _, a := range w.DS.Analyses {
		if a.Set != SetBase {
			add(a.Project, a.Mech)
		}
	}
	for _, r := range w.DS.Records {
		if r.Mech != "none" {
			add(r.Project, r.Mech)
		}
	}
	return out
}

// Print writes the report as tables, the tune and measure splits apart.
func (r Report) Print(out io.Writer, verbose bool) {
	fmt.Fprintf(out, "root-cause analysis quality: %d analyses in two workspaces (full and early queries)\n\n",
		r.Analyses)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "similar analyses\tsplit\tqueries\ttop-1\trecall@5\tMRR\t"
	if len(r.Before) > 0 {
		head += "before: top-1\trecall@5\tMRR\t"
	}
	fmt.Fprintln(tw, head)
	for _, x := range r.Rankings {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t", x.Set, x.Split, x.N, x.Top1, x.Recall5, x.MRR)
		if len(r.Before) > 0 {
			b := r.BeforeRanking(x.Split, x.Set)
			fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t", b.Top1, b.Recall5, b.MRR)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "suggestions\tsplit\truns\tsilent\tsuggested\trelevant\trestated\tprecision\trecall\t")
	for _, x := range r.Suggestions {
		recall := "-"
		if x.Possible > 0 {
			recall = fmt.Sprintf("%.2f", x.Recall)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.2f\t%s\t\n", x.Kind, x.Split, x.Runs, x.Silent, x.Suggested,
			x.Relevant, x.Restated, x.Precision, recall)
	}
	tw.Flush()
	if !verbose {
		return
	}
	for _, x := range r.Rankings {
		for _, m := range x.Misses {
			fmt.Fprintf(out, "miss %s/%s %s\n", x.Split, x.Set, m)
		}
	}
	for _, x := range r.Suggestions {
		for _, m := range x.Wrong {
			fmt.Fprintf(out, "wrong %s/%s %s\n", x.Split, x.Kind, m)
		}
	}
}
