package suggest

import (
	"cmp"
	"context"
	"sort"
	"strings"
)

// LookAcross matches every record of every other project (risks, tasks,
// other analyses' mechanisms) against each of the analysis's root causes
// and contributing factors, by their terms, the terms that only restate the
// analysis's symptom counting half: a project whose best record reaches
// MinEvidence gets one suggestion carrying its five best records, each with
// the node it matched, and every corrective action to adapt.
func (d Deterministic) LookAcross(_ context.Context, in LookAcrossInput) ([]Suggestion, error) {
	minEvidence := cmp.Or(d.MinEvidence, 0.45)
	symptom := map[string]bool{}
	for _, t := range in.Symptom {
		symptom[t] = true
	}
	type mechanism struct {
		text string
		bag  Bag
	}
	var mechs []mechanism
	for _, n := range in.Mechanism {
		w := map[string]float64{}
		for _, t := range n.Terms {
			if !Keep(t) {
				continue
			}
			w[t] = 1
			if symptom[t] {
				w[t] = echo
			}
		}
		if len(w) > 0 {
			mechs = append(mechs, mechanism{n.Text, NewBag(w)})
		}
	}
	if len(mechs) == 0 {
		mechs = append(mechs, mechanism{strings.Join(in.RootCauses, "; "), termBag(in.Symptom)})
	}
	mechanismText := strings.Join(in.RootCauses, "; ")
	var out []Suggestion
	for _, p := range in.Projects {
		var items []Candidate
		for _, it := range p.Items {
			bag := termBag(it.Terms)
			best, matched := 0.0, ""
			for _, m := range mechs {
				if a := Alike(m.bag, bag); a > best {
					best, matched = a, m.text
				}
			}
			if best > 0 {
				it.Score, it.Matched = Round(best), matched
				items = append(items, it)
			}
		}
		sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
		if len(items) == 0 || items[0].Score < minEvidence {
			continue
		}
		items = items[:min(len(items), 5)]
		out = append(out, Suggestion{ProjectID: p.ProjectID, Mechanism: mechanismText, Evidence: items,
			Actions: in.Actions, Score: items[0].Score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}
