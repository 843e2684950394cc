package quality

import (
	"context"
	"fmt"
	"sort"

	"github.com/pmapi/pmapi/resource/rrca/suggest"
)

// Offline computes the ranking and the 5-why engine in process from the
// texts' lexemes, as the API's jobs do, with the profile and score given:
// what the ranking's and the engine's settings are tuned with, on the tune
// split (Only), before the benchmark measures them through the API.
type Offline struct {
	DS    Dataset
	items map[string]*lexed
	// records are the dataset's records as candidates, with their lexemes,
	// and their texts (title and text) as the former similarity compares
	// them with the focus of a 5-why run.
	records []suggest.Candidate
	docs    []formerDoc
	focus   map[string]formerDoc
}

// lexed is an analysis with its texts' lexemes.
type lexed struct {
	a       Analysis
	texts   []suggest.Text
	nodes   []suggest.Node
	problem []string // the lexemes of title and problem statement together
}

// NewOffline reads the lexemes of every text of ds, and what the 5-why run
// of each early query compares records with (the former similarity, as the
// API's run does).
func NewOffline(ctx context.Context, ds Dataset, t Texts) (*Offline, error) {
	var texts []string
	for _, a := range ds.Analyses {
		texts = append(texts, a.Title, a.Problem, a.Title+" "+a.Problem)
		for _, n := range a.Nodes {
			texts = append(texts, n.Text)
		}
	}
	for _, r := range ds.Records {
		texts = append(texts, r.Title+" "+r.Text)
	}
	terms, err := t.Lexemes(ctx, texts)
	if err != nil {
		return nil, err
	}
	o := &Offline{DS: ds, items: map[string]*lexed{}, focus: map[string]formerDoc{}}
	next := func() []string { t := terms[0]; terms = terms[1:]; return t }
	for _, a := range ds.Analyses {
		l := &lexed{a: a}
		l.texts = []suggest.Text{{Kind: "TITLE", Terms: next()}, {Kind: "STATEMENT", Terms: next()}}
		l.problem = next()
		depth := 0
		for i, n := range a.Nodes {
			t := suggest.Text{Kind: n.Kind, Terms: next()}
			if n.Kind == "WHY" {
				depth++
				t.Depth = depth
			}
			l.texts = append(l.texts, t)
			l.nodes = append(l.nodes, suggest.Node{ID: fmt.Sprintf("%s#%d", a.Key, i), Kind: n.Kind, Depth: t.Depth,
				Text: n.Text, Terms: t.Terms})
		}
		o.items[a.Key] = l
	}
	var docs []string
	for i, r := range ds.Records {
		o.records = append(o.records, suggest.Candidate{Type: r.Type, ID: fmt.Sprintf("record#%d", i), Title: r.Title,
			Terms: next()})
		docs = append(docs, r.Title+" "+r.Text)
	}
	var early []string
	for _, a := range ds.Analyses {
		if a.Set == SetHardNegativeEarly || a.Set == SetParaphraseEarly {
			early = append(early, a.Key)
			docs = append(docs, focus(a))
		}
	}
	former, err := formerDocs(ctx, t, docs)
	if err != nil {
		return nil, err
	}
	o.docs = former[:len(ds.Records)]
	for i, k := range early {
		o.focus[k] = former[len(ds.Records)+i]
	}
	return o, nil
}

// focus is what a 5-why run compares the workspace's records with: the
// deepest WHY and the problem.
func focus(a Analysis) string {
	f := a.Title + ". " + a.Problem
	for i := len(a.Nodes) - 1; i >= 0; i-- {
		if a.Nodes[i].Kind == "WHY" {
			return a.Nodes[i].Text + ". " + f
		}
	}
	return f
}

// Scorer is a ranking: how an analysis's texts make its profile and how two
// profiles score.
type Scorer struct {
	Profile func([]suggest.Text) suggest.Profile
	Score   func(a, b suggest.Profile) float64
}

// Current is the ranking the jobs use.
var Current = Scorer{Profile: suggest.NewProfile, Score: suggest.Score}

// minSimilar is rrca.MinSimilar (the score under which no pair is stored).
const minSimilar = 0.1

// neighbours is every other analysis of q's world scoring minSimilar or more
// with q, best first.
func (o *Offline) neighbours(q Analysis, profiles map[string]suggest.Profile, sc Scorer) []neighbour {
	early := q.Set == SetHardNegativeEarly || q.Set == SetParaphraseEarly
	var out []neighbour
	for _, a := range o.DS.Analyses {
		if a.Key == q.Key {
			continue
		}
		if a.Set != SetBase && (a.Set == SetHardNegativeEarly || a.Set == SetParaphraseEarly) != early {
			continue
		}
		if s := sc.Score(profiles[q.Key], profiles[a.Key]); s >= minSimilar {
			out = append(out, neighbour{a.Key, s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

func (o *Offline) profiles(sc Scorer) map[string]suggest.Profile {
	out := make(map[string]suggest.Profile, len(o.items))
	for k, l := range o.items {
		out[k] = sc.Profile(l.texts)
	}
	return out
}

// Rank ranks every query's twin with sc, as Run does through the API.
func (o *Offline) Rank(sc Scorer) []Ranking {
	profiles := o.profiles(sc)
	return rankAll(o.DS, func(q Analysis) []string {
		var keys []string
		for _, n := range o.neighbours(q, profiles, sc) {
			if o.items[n.key].a.Set == SetBase {
				keys = append(keys, n.key)
			}
		}
		return keys
	})
}

// FiveWhy works engine's 5-why run on every early query with the neighbours
// sc ranks, as the API's job does, and judges its suggestions as Run does.
func (o *Offline) FiveWhy(ctx context.Context, sc Scorer, engine suggest.Engine) ([]Suggestions, error) {
	profiles := o.profiles(sc)
	w := &World{texts: map[string][]source{}}
	for _, a := range o.DS.Analyses {
		whys := 0
		for _, n := range a.Nodes {
			s := source{Key: a.Key, Kind: n.Kind, WhyIndex: -1, Mech: a.Mech, Project: a.Project}
			if n.Kind == "WHY" {
				s.WhyIndex = whys
				whys++
			}
			w.remember(n.Text, s)
		}
	}
	for _, r := range o.DS.Records {
		w.remember(r.Title, source{Kind: r.Type, WhyIndex: -1, Mech: r.Mech, Project: r.Project})
	}
	var out []Suggestions
	for _, split := range splits() {
		s := Suggestions{Split: split, Kind: "5-why"}
		for _, q := range o.DS.Analyses {
			if q.Split != split || (q.Set != SetHardNegativeEarly && q.Set != SetParaphraseEarly) {
				continue
			}
			whys, err := o.fiveWhy(ctx, q, profiles, sc, engine)
			if err != nil {
				return nil, err
			}
			s.Runs++
			if len(whys) == 0 {
				s.Silent++
			}
			for _, y := range whys {
				s.Suggested++
				switch w.judgeWhy(q, y.Text) {
				case "relevant":
					s.Relevant++
				case "restated":
					s.Restated++
					s.Wrong = append(s.Wrong, fmt.Sprintf("%s restated: %q", q.Key, y.Text))
				default:
					s.Wrong = append(s.Wrong, fmt.Sprintf("%s wrong: %q", q.Key, y.Text))
				}
			}
		}
		if s.Suggested > 0 {
			s.Precision = float64(s.Relevant) / float64(s.Suggested)
		}
		if s.Runs > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// maxSimilar is how many neighbours a 5-why run reads (the API's
// maxSimilarForSuggestions).
const maxSimilar = 10

func (o *Offline) fiveWhy(ctx context.Context, q Analysis, profiles map[string]suggest.Profile, sc Scorer,
	engine suggest.Engine) ([]suggest.Why, error) {
	l := o.items[q.Key]
	in := suggest.WhyInput{Problem: q.Title + ". " + q.Problem, ProblemTerms: l.problem}
	for _, n := range l.nodes {
		in.Existing = append(in.Existing, n.Text)
		in.Own = append(in.Own, n)
	}
	ns := o.neighbours(q, profiles, sc)
	for _, n := range ns[:min(len(ns), maxSimilar)] {
		s := suggest.Similar{ID: n.key, Title: o.items[n.key].a.Title, Score: n.score}
		for _, node := range o.items[n.key].nodes {
			switch node.Kind {
			case "WHY", "CAUSE", "ROOT_CAUSE", "CONTRIBUTING_FACTOR":
				s.Nodes = append(s.Nodes, node)
			}
		}
		in.Similar = append(in.Similar, s)
	}
	if len(o.records) > 0 {
		cands := append([]suggest.Candidate(nil), o.records...)
		for i := range cands {
			cands[i].Score = formerScore(o.focus[q.Key], o.docs[i])
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
		in.Candidates = cands[:min(len(cands), 20)]
	}
	return engine.FiveWhy(ctx, in)
}
