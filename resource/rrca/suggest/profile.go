package suggest

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Parts of a profile: what a text of an analysis tells.
const (
	// Symptom is what was seen: the title, the problem statement, PROBLEM and
	// EVIDENCE nodes.
	Symptom = "s"
	// Mechanism is how it came about: the why chain, causes, root causes,
	// contributing factors and escape points.
	Mechanism = "m"
)

// Text is one text of an analysis: its kind (a node kind, or TITLE and
// STATEMENT), for a WHY its depth in the why chain (1 for a top WHY), and its
// terms (lexemes, as PostgreSQL's english text search configuration makes
// them).
type Text struct {
	Kind  string
	Depth int
	Terms []string
}

// Weight is how much a text of kind (at depth, for a WHY) says about its
// part, and which part it belongs to ("" for a text that takes no part).
// The deeper a WHY, the more it names the mechanism rather than restating
// the symptom.
func Weight(kind string, depth int) (part string, w float64) {
	switch kind {
	case "TITLE", "STATEMENT", "PROBLEM":
		return Symptom, 1
	case "EVIDENCE":
		return Symptom, 0.5
	case "WHY":
		return Mechanism, min(0.5+0.25*float64(max(depth, 1)), 1.25)
	case "CAUSE":
		return Mechanism, 1.25
	case "ROOT_CAUSE":
		return Mechanism, 1.5
	case "CONTRIBUTING_FACTOR":
		return Mechanism, 1
	case "ESCAPE_POINT":
		return Mechanism, 0.75
	}
	return "", 0
}

// echo is what a mechanism term that also names the symptom keeps of its
// weight: "the cache missed" restates "overloaded by cache misses".
const echo = 0.5

// generic are lexemes any analysis uses, whatever its mechanism.
var generic = map[string]bool{
	"whi": true, "becaus": true, "caus": true, "root": true, "due": true, "fail": true, "failur": true,
	"problem": true, "issu": true, "result": true, "occur": true, "happen": true, "time": true, "day": true,
	"week": true, "hour": true, "minut": true, "one": true, "two": true, "three": true, "also": true,
	"still": true, "could": true, "would": true, "get": true, "got": true, "made": true, "make": true,
	"everi": true, "nobodi": true, "anyon": true, "someth": true, "way": true, "like": true,
}

// Keep says whether a lexeme counts: not a generic one, and with a letter.
func Keep(term string) bool {
	return !generic[term] && strings.IndexFunc(term, unicode.IsLetter) >= 0
}

// Bag is a weighted set of terms with its norms.
type Bag struct {
	W map[string]float64
	// L2 and L1 are the norms of the whole bag: a bag read back from a
	// workspace's postings holds only the terms shared with another, and
	// keeps the norms of all of them.
	L2, L1 float64
}

// Profile is an analysis as the ranking compares it: its symptom and
// mechanism terms, each weighted by the texts they come from.
type Profile struct {
	Symptom, Mechanism Bag
}

// Round is the precision weights are kept in (float32, as stored), so a
// profile built from texts and one read back score alike.
func Round(w float64) float64 { return float64(float32(w)) }

// NewProfile builds the profile of an analysis's texts.
func NewProfile(texts []Text) Profile {
	sym, mech := map[string]float64{}, map[string]float64{}
	for _, t := range texts {
		part, w := Weight(t.Kind, t.Depth)
		bag := sym
		if part == Mechanism {
			bag = mech
		} else if part == "" {
			continue
		}
		seen := map[string]bool{}
		for _, term := range t.Terms {
			if Keep(term) && !seen[term] {
				seen[term] = true
				bag[term] += w
			}
		}
	}
	for term := range mech {
		if sym[term] > 0 {
			mech[term] *= echo
		}
	}
	return Profile{Symptom: NewBag(sym), Mechanism: NewBag(mech)}
}

// NewBag rounds weights and computes the norms.
func NewBag(w map[string]float64) Bag {
	b := Bag{W: make(map[string]float64, len(w))}
	for _, t := range sortedTerms(w) {
		v := Round(w[t])
		b.W[t] = v
		b.L2 += v * v
		b.L1 += v
	}
	b.L2 = Round(math.Sqrt(b.L2))
	b.L1 = Round(b.L1)
	return b
}

func sortedTerms(w map[string]float64) []string {
	out := make([]string, 0, len(w))
	for t := range w {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Terms is every term of the profile, sorted.
func (p Profile) Terms() []string {
	all := map[string]float64{}
	for t := range p.Symptom.W {
		all[t] = 1
	}
	for t := range p.Mechanism.W {
		all[t] = 1
	}
	return sortedTerms(all)
}

// Empty says the profile has no term at all.
func (p Profile) Empty() bool { return len(p.Symptom.W) == 0 && len(p.Mechanism.W) == 0 }

// Alike is how alike two bags are, 0 to 1: the mean of their cosine and
// their weighted overlap coefficient (the shared weight over the smaller
// bag's), so a short early text that a long analysis fully contains counts
// as much as two long texts that agree. Symmetric to the last bit: terms are
// visited in sorted order.
func Alike(a, b Bag) float64 {
	small, large := a.W, b.W
	if len(large) < len(small) {
		small, large = large, small
	}
	shared := make([]string, 0, len(small))
	for t := range small {
		if _, ok := large[t]; ok {
			shared = append(shared, t)
		}
	}
	sort.Strings(shared)
	var dot, overlap float64
	for _, t := range shared {
		x, y := a.W[t], b.W[t]
		dot += x * y
		overlap += min(x, y)
	}
	return alike(dot, overlap, a.L2, a.L1, b.L2, b.L1)
}

// alike is Alike of two bags from the sums over their shared terms and
// their norms.
func alike(dot, overlap, aL2, aL1, bL2, bL1 float64) float64 {
	if aL1 == 0 || bL1 == 0 {
		return 0
	}
	return (dot/(aL2*bL2) + overlap/min(aL1, bL1)) / 2
}

// The weights of Score, tuned on the quality benchmark's tune split
// (resource/rrca/quality).
const (
	// symptomWeight is what the symptoms weigh when both analyses name their
	// mechanism fully; the mechanisms weigh the rest.
	symptomWeight = 0.1
	// symptomEnough is how alike two analyses' symptoms need to be to count
	// fully: beyond it, the same wording of the problem says no more about
	// its cause (a hard negative copies another analysis's problem
	// statement), below it the symptoms still tell an analysis of the same
	// kind of problem from an unrelated one.
	symptomEnough = 0.5
	// fullMechanism is the mechanism weight (the sum of its terms' weights,
	// the bag's L1 norm) from which a mechanism counts fully: about two WHYs'
	// worth of distinct terms. Below it the symptoms take over the share the
	// mechanism cannot carry, down to an analysis with no WHY at all, which is
	// compared by its symptoms only.
	fullMechanism = 3
)

// Score is how alike two analyses are, 0 to 1, symmetric: mostly how alike
// their mechanisms are, and their symptoms for the rest, or more when the
// poorer of the two mechanisms is still short (an early analysis). Symptoms
// count up to symptomEnough; mechanism terms that both analyses also use for
// their symptoms are left out of the mechanisms' comparison (two first WHYs
// restating one problem share its words, not a cause).
func Score(a, b Profile) float64 {
	small, large := a, b
	if len(b.Symptom.W)+len(b.Mechanism.W) < len(a.Symptom.W)+len(a.Mechanism.W) {
		small, large = b, a
	}
	var sh Shared
	for _, t := range small.Terms() {
		if large.Symptom.W[t] > 0 || large.Mechanism.W[t] > 0 {
			sh.Add(a.Symptom.W[t], a.Mechanism.W[t], b.Symptom.W[t], b.Mechanism.W[t])
		}
	}
	return sh.Score(a.Norms(), b.Norms())
}

// Norms are a profile's bags' norms: with the sums over the terms two
// profiles share (Shared), all Score needs of them.
type Norms struct{ SymptomL2, SymptomL1, MechanismL2, MechanismL1 float64 }

// Norms returns the profile's norms.
func (p Profile) Norms() Norms {
	return Norms{p.Symptom.L2, p.Symptom.L1, p.Mechanism.L2, p.Mechanism.L1}
}

// Shared accumulates, term by term, what Score needs of the terms two
// profiles share, so that a recomputation can score every candidate from
// the postings it streams without building the candidates' profiles. The
// sums do not depend on the order the terms come in: the weights are
// multiples of 1/8 (Weight, echo), so their products and sums are exact.
type Shared struct{ symDot, symOverlap, mechDot, mechOverlap float64 }

// Add counts one term of both profiles with its weights in each (0 where
// the term is not one of a part's).
func (s *Shared) Add(aSymptom, aMechanism, bSymptom, bMechanism float64) {
	if aSymptom > 0 && bSymptom > 0 {
		s.symDot += aSymptom * bSymptom
		s.symOverlap += min(aSymptom, bSymptom)
		return
	}
	if aMechanism > 0 && bMechanism > 0 {
		s.mechDot += aMechanism * bMechanism
		s.mechOverlap += min(aMechanism, bMechanism)
	}
}

// Score is Score of the two profiles whose shared terms s has counted.
func (s Shared) Score(a, b Norms) float64 {
	sym := alike(s.symDot, s.symOverlap, a.SymptomL2, a.SymptomL1, b.SymptomL2, b.SymptomL1)
	sym = min(sym, symptomEnough) / symptomEnough
	mech := alike(s.mechDot, s.mechOverlap, a.MechanismL2, a.MechanismL1, b.MechanismL2, b.MechanismL1)
	c := min(1, min(a.MechanismL1, b.MechanismL1)/fullMechanism)
	return (1-c)*sym + c*(symptomWeight*sym+(1-symptomWeight)*mech)
}
