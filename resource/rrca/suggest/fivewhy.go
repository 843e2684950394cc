package suggest

import (
	"cmp"
	"context"
	"sort"
)

// The deterministic 5-why engine's settings, tuned on the quality
// benchmark's tune split (resource/rrca/quality).
const (
	// reach keeps the similar analyses scoring at least this share of the
	// best one's: the ones a suggestion may draw on and its confidence is
	// measured against. It is wide on purpose: an early analysis whose
	// wording matches one analysis and whose first WHY matches another
	// ranks the wrong one first by up to about twice the right one's score,
	// and the right one must still count, so that the two disagree and
	// nothing is said.
	reach = 0.4
	// minConfidence is Deterministic.MinConfidence's default: a cause must
	// carry most of the close analyses' weight, not merely the larger part.
	minConfidence = 0.7
	// minTop is the score the best similar analysis needs for any
	// suggestion: below it nothing is alike enough to learn from.
	minTop = 0.1
	// sameCause is how alike two candidates' terms must be to count as the
	// same cause said twice (Alike over their term sets).
	sameCause = 0.35
	// restatement is how alike a candidate must be to a node the analysis
	// has, or to its problem, to restate it.
	restatement = 0.5
	// minRecord is the score a risk or task needs to be suggested when no
	// similar analysis is close enough to learn from.
	minRecord = 0.2
	// recordRestatement is restatement for a risk or task: a record's short
	// title is mostly the equipment it names, which the analysis's own nodes
	// name too, so only a closer match restates one.
	recordRestatement = 0.7
)

// kindWeight is how much a node of kind (a WHY at depth) of a similar
// analysis is worth as the next why of an analysis whose deepest WHY is at
// depth deepest; 0 leaves it out. A WHY at or above that depth answers a
// question the analysis has answered already.
func kindWeight(kind string, depth, deepest int) float64 {
	switch kind {
	case "WHY":
		switch {
		case depth <= deepest:
			return 0
		case depth == deepest+1:
			return 1
		default:
			return 0.9
		}
	case "ROOT_CAUSE":
		return 1
	case "CAUSE":
		return 0.9
	case "CONTRIBUTING_FACTOR":
		return 0.7
	}
	return 0
}

// termBag is a text's terms, each weighing 1.
func termBag(terms []string) Bag {
	w := map[string]float64{}
	for _, t := range terms {
		if Keep(t) {
			w[t] = 1
		}
	}
	return NewBag(w)
}

// cause is a candidate why: a node of a similar analysis, its score, and the
// others that say the same.
type cause struct {
	node     Node
	from     Similar
	score    float64
	bag      Bag
	members  []cause
	analyses map[string]bool
	support  float64
}

// FiveWhy ranks candidate causes across the similar analyses that have gone
// further than the asking one and are close to the best of them (with none
// close enough, the workspace's matching risks and tasks stand in): every
// node that could be the next why (a deeper WHY, a cause, a root cause, a
// contributing factor), weighted by its analysis's score and its kind, less
// those restating a node the analysis has or its problem.
// Candidates that say the same thing are one cause, supported by every
// analysis that says it; a cause's confidence is its support's share of the
// close analyses' scores. Causes under MinConfidence are not suggested: when
// the close analyses disagree, the engine says nothing rather than guess.
func (d Deterministic) FiveWhy(_ context.Context, in WhyInput) ([]Why, error) {
	maxWhys := cmp.Or(d.MaxWhys, 3)
	minConf := cmp.Or(d.MinConfidence, minConfidence)
	reach := cmp.Or(d.Reach, reach)
	similar := append([]Similar(nil), in.Similar...)
	sort.SliceStable(similar, func(i, j int) bool { return similar[i].Score > similar[j].Score })
	deepest := 0
	var own []Bag
	seen := map[string]bool{}
	for _, e := range in.Existing {
		seen[normal(e)] = true
	}
	for _, n := range in.Own {
		if n.Kind == "WHY" {
			deepest = max(deepest, n.Depth)
		}
		own = append(own, termBag(n.Terms))
	}
	similar = further(similar, deepest)
	if len(similar) == 0 || similar[0].Score < minTop {
		return records(in.Candidates, seen, own, maxWhys), nil
	}
	said := append(own, termBag(in.ProblemTerms))
	var mass float64
	var cands []cause
	for _, s := range similar {
		if s.Score < reach*similar[0].Score {
			break
		}
		mass += s.Score
		for _, n := range s.Nodes {
			w := kindWeight(n.Kind, n.Depth, deepest)
			if w == 0 || seen[normal(n.Text)] {
				continue
			}
			c := cause{node: n, from: s, score: s.Score * w, bag: termBag(n.Terms)}
			if len(c.bag.W) == 0 || restates(c.bag, said, restatement) {
				continue
			}
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var causes []*cause
	for _, c := range cands {
		var into *cause
		for _, k := range causes {
			if Alike(c.bag, k.bag) >= sameCause {
				into = k
				break
			}
		}
		if into == nil {
			k := c
			k.analyses = map[string]bool{}
			causes = append(causes, &k)
			into = &k
		}
		into.members = append(into.members, c)
		if !into.analyses[c.from.ID] {
			into.analyses[c.from.ID] = true
			into.support += c.from.Score
		}
	}
	var out []Why
	for _, k := range causes {
		conf := k.support / mass
		if conf < minConf {
			continue
		}
		w := Why{Text: k.node.Text, Confidence: Round(conf)}
		for _, m := range k.members {
			w.Evidence = append(w.Evidence, Candidate{Type: "node", ID: m.node.ID, RRCAID: m.from.ID,
				Title: m.node.Text, Score: Round(m.score)})
		}
		for _, r := range in.Candidates {
			if Alike(termBag(r.Terms), k.bag) >= sameCause {
				w.Evidence = append(w.Evidence, r)
			}
		}
		out = append(out, w)
		if len(out) == maxWhys {
			break
		}
	}
	return out, nil
}

// records suggests the workspace's risks and tasks that match the problem,
// best first, when no similar analysis is close: each at its own score as
// its confidence, less those saying what a node of the analysis says.
func records(cands []Candidate, seen map[string]bool, own []Bag, maxWhys int) []Why {
	cands = append([]Candidate(nil), cands...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	var out []Why
	for _, c := range cands {
		if c.Score < minRecord || len(out) == maxWhys {
			break
		}
		if seen[normal(c.Title)] || restates(termBag(c.Terms), own, recordRestatement) {
			continue
		}
		seen[normal(c.Title)] = true
		out = append(out, Why{Text: c.Title, Confidence: Round(c.Score), Evidence: []Candidate{c}})
	}
	return out
}

// restates says whether bag says again one of the texts said: at least
// threshold alike to one of them.
func restates(bag Bag, said []Bag, threshold float64) bool {
	for _, s := range said {
		if Alike(bag, s) >= threshold {
			return true
		}
	}
	return false
}

// further keeps the similar analyses that have gone further than the asking
// one: a node that could be its next why. One no further along (another
// early analysis) cannot tell the next why, and counted among the close
// analyses it would only dilute every cause's support.
func further(similar []Similar, deepest int) []Similar {
	var out []Similar
	for _, s := range similar {
		for _, n := range s.Nodes {
			if kindWeight(n.Kind, n.Depth, deepest) > 0 {
				out = append(out, s)
				break
			}
		}
	}
	return out
}
