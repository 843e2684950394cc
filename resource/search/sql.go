package search

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/facet"
)

// headline marks matches in a snippet.
const headline = `'StartSel=«,StopSel=»,MaxWords=24,MinWords=8,MaxFragments=1'`

// query is the search's one statement and its arguments: $1 the workspace,
// $2 the query text, $3 its words as prefixes (prefixQuery), $4 the number of
// rows to read, then the filters' and the query's words for the trigram
// branch. Each source has two parts, each reading only rows an index finds:
// matches of the words (wordsSQL, the CTE words) and, when those do not fill
// the page, typos (typosSQL); each ranks its rows and keeps its best. The
// outer select merges the parts and makes snippets of the page's rows only,
// since ts_headline reads the whole text.
func query(sources []facet.Search, f Filter, rows int, ws uuid.UUID, q string) (string, []any) {
	args := []any{ws, q, prefixQuery(q), rows}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var project, status, since, after string
	if f.ProjectID != nil {
		project = arg(*f.ProjectID)
	}
	if f.Status != "" {
		status = arg(f.Status)
	}
	if f.UpdatedSince != nil {
		since = arg(*f.UpdatedSince)
	}
	if f.After != nil {
		after = fmt.Sprintf("where (s.score, s.id) < (%s::float8, %s::uuid)", arg(f.After.Score), arg(f.After.ID))
	}
	var fuzzy []string
	for _, w := range fuzzyWords(q) {
		fuzzy = append(fuzzy, arg(w))
	}
	words := make([]string, 0, len(sources))
	typos := make([]string, 0, len(sources))
	for _, s := range sources {
		var filters string
		if project != "" {
			filters += " and " + s.ProjectID + " = " + project
		}
		if status != "" {
			filters += " and " + s.Status + " = " + status
		}
		if since != "" {
			filters += " and r.updated_at >= " + since
		}
		words = append(words, wordsSQL(s, filters, after))
		typos = append(typos, typosSQL(s, fuzzyMatch(s, fuzzy), filters, after))
	}
	return `with words as (` + strings.Join(words, " union all ") + `)
		select type, id, project_id, title,
		case kind
			when 2 then coalesce(
				nullif(ts_headline('english', body, websearch_to_tsquery('english', $2), ` + headline + `), ''),
				left(title, 160))
			when 1 then coalesce(
				nullif(ts_headline('english', body, to_tsquery('english', $3), ` + headline + `), ''),
				left(title, 160))
			else left(coalesce(nullif(body, ''), title), 160)
		end as snippet, score
		from (select * from words union all ` + strings.Join(typos, " union all ") + `) hits
		order by score desc, id desc limit $4`, args
}

// wordsSQL is a source's best rows that match the query's words (kind 2) or
// their prefixes (kind 1), through the stored tsvector's GIN index. ts_rank
// with normalization 32 is below 1, so the kinds never mix; a title (weight A)
// ranks above the body.
func wordsSQL(s facet.Search, filters, after string) string {
	if s.Docs != "" {
		return wordsDocsSQL(s, filters, after)
	}
	return fmt.Sprintf(`(select * from (select type, id, project_id, title, body, kind,
			(case kind when 2 then 2 + ts_rank(doc, websearch_to_tsquery('english', $2), 32)
				else 1 + ts_rank(doc, to_tsquery('english', $3), 32) end)::float8 as score
		from (select '%[1]s'::text as type, r.id, %[5]s as project_id, %[3]s as title, %[4]s as body, %[9]s.search_doc as doc,
			case when %[9]s.search_doc @@ websearch_to_tsquery('english', $2) then 2 else 1 end as kind
			from %[2]s %[6]s%[7]s and (%[9]s.search_doc @@ websearch_to_tsquery('english', $2)
				or %[9]s.search_doc @@ to_tsquery('english', $3))) m) s
		%[8]s order by score desc, id desc limit $4)`,
		s.Type, s.From(), s.Title, s.Body, s.ProjectID, s.Live, filters, after, docs(s))
}

// wordsDocsSQL is wordsSQL for a source whose text is in its Docs table: the
// hits are ranked there first, best first, and each one's row is read by key
// in that order until the page is full (row filters can drop a hit), so a
// search reads a page of rows rather than one per hit.
func wordsDocsSQL(s facet.Search, filters, after string) string {
	return fmt.Sprintf(
		`(select '%[1]s'::text as type, s.id, %[5]s as project_id, s.title, s.body, s.kind, s.score
		from (select * from (select d.id, %[3]s as title, %[4]s as body, m.kind,
				(case m.kind when 2 then 2 + ts_rank(d.search_doc, websearch_to_tsquery('english', $2), 32)
					else 1 + ts_rank(d.search_doc, to_tsquery('english', $3), 32) end)::float8 as score
			from %[2]s d cross join lateral
				(select case when d.search_doc @@ websearch_to_tsquery('english', $2) then 2 else 1 end as kind) m
			where d.workspace_id = $1 and (d.search_doc @@ websearch_to_tsquery('english', $2)
				or d.search_doc @@ to_tsquery('english', $3))) s
			%[8]s order by score desc, id desc) s
		cross join lateral (select * from %[9]s r where r.workspace_id = $1 and r.id = s.id offset 0) r
		where %[6]s%[7]s order by s.score desc, s.id desc limit $4)`,
		s.Type,
		pgx.Identifier{s.Docs}.Sanitize(),
		s.Title,
		s.Body,
		s.ProjectID,
		s.Live,
		filters,
		after,
		pgx.Identifier{s.Table}.Sanitize(),
	)
}

// docs is the alias of the table that holds a source's search_doc.
func docs(s facet.Search) string {
	if s.Docs == "" {
		return "r"
	}
	return "d"
}

// typosSQL is a source's best rows that match the query by trigrams alone
// (kind 0, score below 1), through the trigram GIN indexes. They rank below
// every word match, so the part runs only when the word matches after the
// cursor do not fill the page: a one-time filter on the words CTE, so a
// search that finds its words never pays for the trigram index's candidates
// (thousands for a short word, each compared again in full).
func typosSQL(s facet.Search, fuzzy, filters, after string) string {
	return fmt.Sprintf(
		`(select * from (select '%[1]s'::text as type, r.id, %[5]s as project_id, %[3]s as title, %[4]s as body, 0 as kind,
			greatest(strict_word_similarity($2, %[3]s), strict_word_similarity($2, %[4]s) / 2)::float8 as score
			from %[2]s %[6]s%[7]s and (%[8]s)
				and not (%[10]s.search_doc @@ websearch_to_tsquery('english', $2) or %[10]s.search_doc @@ to_tsquery('english', $3))
				and (select count(*) from (select 1 from words limit $4) w) < $4) s
		%[9]s order by score desc, id desc limit $4)`,
		s.Type,
		s.From(),
		s.Title,
		s.Body,
		s.ProjectID,
		s.Live,
		filters,
		fuzzy,
		after,
		docs(s),
	)
}

// fuzzyMatch is the trigram branch's condition: every word of the query
// (params) close to a word of one of the source's fuzzy columns. Word by word,
// so that one common word of a longer query does not match on its own, and
// each word's condition an index condition (a BitmapAnd of the words).
func fuzzyMatch(s facet.Search, params []string) string {
	if len(params) == 0 {
		return "false"
	}
	cols := make([]string, 0, len(s.Fuzzy))
	for _, c := range s.Fuzzy {
		words := make([]string, 0, len(params))
		for _, p := range params {
			words = append(words, p+" <<% "+c)
		}
		cols = append(cols, "("+strings.Join(words, " and ")+")")
	}
	return strings.Join(cols, " or ")
}

// Words of fewer runes than minFuzzyWord have too few trigrams to tell a typo
// from another word; a query's first maxFuzzyWords words are compared.
const (
	minFuzzyWord  = 3
	maxFuzzyWords = 4
)

// fuzzyWords are the words of q the trigram branch compares.
func fuzzyWords(q string) []string {
	var out []string
	for _, w := range words(q) {
		if utf8.RuneCountInString(w) >= minFuzzyWord && len(out) < maxFuzzyWords {
			out = append(out, w)
		}
	}
	return out
}

// words are q's runs of letters and digits.
func words(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// maxPrefixWords bounds the words of a prefix query.
const maxPrefixWords = 16

// prefixQuery is q's words as a tsquery of prefixes that must all match
// ("seal pum" is "seal:* & pum:*"). Words are runs of letters and digits, so
// nothing of q reaches to_tsquery as its syntax; "" when q has none (an empty
// tsquery matches nothing).
func prefixQuery(q string) string {
	words := words(q)
	if len(words) > maxPrefixWords {
		words = words[:maxPrefixWords]
	}
	for i, w := range words {
		words[i] = w + ":*"
	}
	return strings.Join(words, " & ")
}
