package quality

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Texts is what the offline measures read of PostgreSQL: each text's
// lexemes (tsvector_to_array(to_tsvector('english', ...)), as the ranking
// profiles them) and its trigrams (show_trgm, as the former ranking's
// similarity compared them), in order, one list a text.
type Texts interface {
	Lexemes(ctx context.Context, texts []string) ([][]string, error)
	Trigrams(ctx context.Context, texts []string) ([][]string, error)
}

// Querier is a database connection or pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Postgres reads Texts from a database migrated by pmapi (pg_trgm
// installed), one statement for all the texts.
type Postgres struct{ DB Querier }

// Lexemes implements Texts.
func (p Postgres) Lexemes(ctx context.Context, texts []string) ([][]string, error) {
	return p.lists(ctx, `select tsvector_to_array(to_tsvector('english'::regconfig, t))
		from unnest($1::text[]) with ordinality as x(t, i) order by i`, texts)
}

// Trigrams implements Texts.
func (p Postgres) Trigrams(ctx context.Context, texts []string) ([][]string, error) {
	return p.lists(ctx, "select show_trgm(t) from unnest($1::text[]) with ordinality as x(t, i) order by i", texts)
}

func (p Postgres) lists(ctx context.Context, sql string, texts []string) ([][]string, error) {
	rows, err := p.DB.Query(ctx, sql, texts)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("%d lists for %d texts", len(out), len(texts))
	}
	return out, err
}

// neighbour is another analysis of a world with its score.
type neighbour struct {
	key   string
	score float64
}

// formerDoc is a text as the former ranking compared it: its set of lexemes
// and its set of trigrams.
type formerDoc struct{ lexemes, trigrams map[string]bool }

// formerDocs reads the sets of texts.
func formerDocs(ctx context.Context, t Texts, texts []string) ([]formerDoc, error) {
	lex, err := t.Lexemes(ctx, texts)
	if err != nil {
		return nil, err
	}
	tri, err := t.Trigrams(ctx, texts)
	if err != nil {
		return nil, err
	}
	set := func(xs []string) map[string]bool {
		m := make(map[string]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	out := make([]formerDoc, len(texts))
	for i := range texts {
		out[i] = formerDoc{set(lex[i]), set(tri[i])}
	}
	return out, nil
}

// formerScore is rrca_text_similarity (migration 0007), the former ranking:
// 0.7 times the cosine of the two sets of lexemes plus 0.3 times pg_trgm's
// similarity of the texts (shared trigrams over all, a real).
func formerScore(a, b formerDoc) float64 {
	if len(a.lexemes) == 0 || len(b.lexemes) == 0 {
		return 0
	}
	shared := func(x, y map[string]bool) int {
		n := 0
		for k := range x {
			if y[k] {
				n++
			}
		}
		return n
	}
	cos := float64(shared(a.lexemes, b.lexemes)) / math.Sqrt(float64(len(a.lexemes))*float64(len(b.lexemes)))
	var trgm float32
	if n := shared(a.trigrams, b.trigrams); n > 0 {
		trgm = float32(n) / float32(len(a.trigrams)+len(b.trigrams)-n)
	}
	return 0.7*cos + 0.3*float64(trgm)
}

// formerMin is the score under which the former ranking stored no pair.
const formerMin = 0.05

// oldDoc is an analysis as the former ranking compared it: its title,
// problem statement and node texts in the order they were written, joined.
func oldDoc(a Analysis) string {
	parts := []string{a.Title, a.Problem}
	var nodes []string
	for _, n := range a.Nodes {
		nodes = append(nodes, n.Text)
	}
	return strings.Join(append(parts, strings.Join(nodes, " ")), " ")
}

// Before measures the former ranking on the dataset in process: the whole
// text of each query scored against every base analysis as
// rrca_text_similarity scored them, the true twin ranked among them as Run
// ranks it among the base analyses of a query's list (pairs under 0.05,
// which the former ranking did not store, absent). Each query's world holds
// the same base analyses, so the worlds make no difference.
func Before(ctx context.Context, ds Dataset, t Texts) ([]Ranking, error) {
	texts := make([]string, len(ds.Analyses))
	for i, a := range ds.Analyses {
		texts[i] = oldDoc(a)
	}
	docs, err := formerDocs(ctx, t, texts)
	if err != nil {
		return nil, err
	}
	byKey := map[string]formerDoc{}
	for i, a := range ds.Analyses {
		byKey[a.Key] = docs[i]
	}
	return rankAll(ds, func(q Analysis) []string {
		var list []neighbour
		for _, b := range ds.Analyses {
			if b.Set != SetBase {
				continue
			}
			if s := formerScore(byKey[q.Key], byKey[b.Key]); s >= formerMin {
				list = append(list, neighbour{b.Key, s})
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].score > list[j].score })
		keys := make([]string, len(list))
		for i, s := range list {
			keys[i] = s.key
		}
		return keys
	}), nil
}

// rankAll ranks every query's twin in the list of base analysis keys that
// list answers for it (best first), per split and set.
func rankAll(ds Dataset, list func(Analysis) []string) []Ranking {
	var out []Ranking
	for _, set := range QuerySets {
		for _, split := range splits() {
			r := Ranking{Split: split, Set: set}
			for _, q := range ds.Analyses {
				if q.Split != split || q.Set != set {
					continue
				}
				keys := list(q)
				rank, first := 0, ""
				for i, k := range keys {
					if i == 0 {
						first = k
					}
					if k == q.Mech {
						rank = i + 1
						break
					}
				}
				r.add(q.Key, first, rank)
			}
			if r.N > 0 {
				r.finish()
				out = append(out, r)
			}
		}
	}
	return out
}

// add counts one query whose twin ranked rank (0: absent), first the
// analysis ranked first.
func (r *Ranking) add(key, first string, rank int) {
	r.N++
	if rank == 1 {
		r.Top1++
	}
	if rank >= 1 && rank <= 5 {
		r.Recall5++
	}
	if rank >= 1 {
		r.MRR += 1 / float64(rank)
	}
	if rank != 1 {
		r.Misses = append(r.Misses, fmt.Sprintf("%s: %s first, twin at %d (0: absent)", key, first, rank))
	}
}

func (r *Ranking) finish() {
	r.Top1, r.Recall5, r.MRR = r.Top1/float64(r.N), r.Recall5/float64(r.N), r.MRR/float64(r.N)
}
