package search

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/resource/facet"
)

// headline marks matches in a snippet.
const headline = `'StartSel=«,StopSel=»,MaxWords=24,MinWords=8,MaxFragments=1'`

// query is the search's one statement and its arguments: $1 the workspace,
// $2 the query text, $3 its words as prefixes (prefixQuery), $4 the number of
// rows to read, then the filters'. Each source's part reads only rows its
// indexes find (the stored tsvector's GIN index for words and prefixes, the
// trigram GIN indexes for typos), ranks them and keeps its best; the outer
// select merges the parts and makes snippets of the page's rows only, since
// ts_headline reads the whole text.
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
	parts := make([]string, 0, len(sources))
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
		parts = append(parts, sourceSQL(s, fuzzyMatch(s, fuzzy), filters, after))
	}
	return `select type, id, project_id, title,
		case kind
			when 2 then coalesce(nullif(ts_headline('english', body, websearch_to_tsquery('english', $2), ` + headline + `), ''), left(title, 160))
			when 1 then coalesce(nullif(ts_headline('english', body, to_tsquery('english', $3), ` + headline + `), ''), left(title, 160))
			else left(coalesce(nullif(body, ''), title), 160)
		end as snippet, score
		from (` + strings.Join(parts, " union all ") + `) hits
		order by score desc, id desc limit $4`, args
}

// sourceSQL is one source's part: its matching rows with kind 2 for a
// full-text match of the words, 1 for a match of their prefixes, 0 for a
// trigram match alone, and a score that keeps the kinds apart (ts_rank with
// normalization 32 is below 1; a title, weight A, ranks above the body).
func sourceSQL(s facet.Search, fuzzy, filters, after string) string {
	return fmt.Sprintf(`(select * from (select type, id, project_id, title, body, kind,
			(case kind
				when 2 then 2 + ts_rank(doc, websearch_to_tsquery('english', $2), 32)
				when 1 then 1 + ts_rank(doc, to_tsquery('english', $3), 32)
				else greatest(strict_word_similarity($2, title), strict_word_similarity($2, body) / 2)
			end)::float8 as score
		from (select '%[1]s'::text as type, r.id, %[5]s as project_id, %[3]s as title, %[4]s as body, r.search_doc as doc,
			case when r.search_doc @@ websearch_to_tsquery('english', $2) then 2
				when r.search_doc @@ to_tsquery('english', $3) then 1 else 0 end as kind
			from %[2]s r
			where r.workspace_id = $1 and %[6]s%[7]s and (
				r.search_doc @@ websearch_to_tsquery('english', $2)
				or r.search_doc @@ to_tsquery('english', $3)
				or %[8]s)) m) s
		%[9]s
		order by score desc, id desc limit $4)`,
		s.Type, pgx.Identifier{s.Table}.Sanitize(), s.Title, s.Body, s.ProjectID, s.Live, filters, fuzzy, after)
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
