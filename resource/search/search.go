// Package search finds workspace resources by text: PostgreSQL full-text search
// (English stemming, so "failing" finds "failure") ranked together with trigram
// word similarity, which catches partial words and typos ("retrofi", "presss").
package search

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/facet"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Item is one hit.
type Item struct {
	Type      string  `json:"type" enum:"project,task,risk,note,action-item,rrca"`
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Snippet   string  `json:"snippet" doc:"Where the text matched, matches between « and »"`
	Score     float64 `json:"score" doc:"Higher is better; comparable within one answer"`
	ProjectID *string `json:"projectId"`
}

// Results is the answer of a search.
type Results struct {
	Items []Item `json:"items"`
}

// MaxQueryLength bounds q; longer text is not a search query.
const MaxQueryLength = 200

// ValidQuery trims and checks q.
func ValidQuery(q string) (string, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return "", pmapi.Invalid("q", "q is required")
	}
	if utf8.RuneCountInString(q) > MaxQueryLength {
		return "", pmapi.Invalid("q", "q must be at most %d characters", MaxQueryLength)
	}
	return q, nil
}

// minSimilarity is how close a trigram match must be to count (pg_trgm's
// word_similarity, 0 to 1): 0.3 admits a typo or a missing last letters in
// words of five or more characters, and little noise.
const minSimilarity = 0.3

// trigramThreshold makes pg_trgm's <% operator (which the trigram indexes
// serve) use minSimilarity instead of its default 0.6, for the transaction.
var trigramThreshold = tenant.MustLocalSetting("pg_trgm.word_similarity_threshold", strconv.FormatFloat(minSimilarity, 'f', -1, 64))

// Run searches sources for q and returns at most limit items, best first.
func Run(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, q string, sources []facet.Search, limit int) ([]Item, error) {
	if len(sources) == 0 {
		return []Item{}, nil
	}
	parts := make([]string, 0, len(sources))
	for _, s := range sources {
		parts = append(parts, sourceSQL(s))
	}
	sql := fmt.Sprintf(`select type, id, project_id, title, snippet, score from (%s) hits order by score desc, id desc limit $4`,
		strings.Join(parts, " union all "))
	var items []Item
	prefixes := map[string]string{}
	for _, s := range sources {
		prefixes[s.Type] = s.IDPrefix
	}
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		// Set the way the workspace is: on Citus only SET LOCAL reaches the
		// workers that run the query.
		shard.QueueLocalSetting(b, trigramThreshold)
		b.Queue(sql, ws, q, minSimilarity, limit).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var it Item
				var id uuid.UUID
				var projectID *uuid.UUID
				if err := rows.Scan(&it.Type, &id, &projectID, &it.Title, &it.Snippet, &it.Score); err != nil {
					return err
				}
				it.ID = pmapi.FormatID(prefixes[it.Type], id)
				if projectID != nil {
					p := pmapi.FormatID(project.IDPrefix, *projectID)
					it.ProjectID = &p
				}
				items = append(items, it)
			}
			return rows.Err()
		})
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
	if items == nil {
		items = []Item{}
	}
	return items, nil
}

// sql is one source's part of the union. $1 workspace, $2 the query text, $3 the
// similarity threshold. A row matches by full text or by trigram similarity of
// the query to a word run of its title or body; its score is the better of the
// two signals, title matches counting double.
func sourceSQL(s facet.Search) string {
	doc := fmt.Sprintf("(%s || ' ' || %s)", s.Title, s.Body)
	return fmt.Sprintf(`select '%[1]s'::text as type, r.id, %[5]s as project_id, %[3]s as title,
		coalesce(nullif(ts_headline('english', %[4]s, websearch_to_tsquery('english', $2),
			'StartSel=«,StopSel=»,MaxWords=24,MinWords=8,MaxFragments=1'), ''), left(%[3]s, 160)) as snippet,
		greatest(
			ts_rank(to_tsvector('english', %[6]s), websearch_to_tsquery('english', $2)) * 4,
			2 * word_similarity($2, %[3]s),
			word_similarity($2, %[4]s)
		)::float8 as score
		from %[2]s r
		where r.workspace_id = $1 and %[7]s and (
			to_tsvector('english', %[6]s) @@ websearch_to_tsquery('english', $2)
			or $2 <%% %[3]s
			or word_similarity($2, %[4]s) >= $3
		)`, s.Type, pgx.Identifier{s.Table}.Sanitize(), s.Title, s.Body, s.ProjectID, doc, s.Live)
}
