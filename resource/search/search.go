// Package search finds workspace resources by text: PostgreSQL full-text search
// (English stemming, so "failing" finds "failure"; a word's start finds the
// word) over each table's stored tsvector, and pg_trgm strict word similarity,
// which catches typos and partial words ("retrofi", "presss"), both served by
// GIN indexes (migrations 0014). Exact word matches rank above prefix matches,
// which rank above trigram ones.
package search

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Item is one hit.
type Item struct {
	Type      string  `json:"type" enum:"project,task,risk,note,action-item,rrca"`
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Snippet   string  `json:"snippet" doc:"Where the text matched, matches between « and »"`
	Score     float64 `json:"score" doc:"Higher is better; comparable within one search and its pages"`
	ProjectID *string `json:"projectId"`
}

// Results is the answer of a search.
type Results struct {
	Items      []Item  `json:"items"`
	NextCursor *string `json:"nextCursor" doc:"Pass as cursor for the next page; null on the last"`
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

// minSimilarity is how close a trigram match of a query word must be to count
// (pg_trgm's strict_word_similarity, 0 to 1, against the text's whole words):
// 0.3 admits a typo, a few missing last letters, or another form of a word
// that stemming keeps apart ("failures", "failing"). Plain word_similarity,
// which compares with any run of characters, matched "seal" with "Supplier
// delay on torque sensors"; whole words score "sensors" 0.18.
const minSimilarity = 0.3

// trigramThreshold makes pg_trgm's <<% operator (which the trigram indexes
// serve) use minSimilarity instead of its default 0.5, for the transaction.
var trigramThreshold = tenant.MustLocalSetting(
	"pg_trgm.strict_word_similarity_threshold",
	strconv.FormatFloat(minSimilarity, 'f', -1, 64),
)

// Filter narrows a search; the zero value narrows nothing.
type Filter struct {
	ProjectID    *uuid.UUID
	Status       string // sources without a status are not read when set
	UpdatedSince *time.Time
	After        *Key // the page starts below this key; nil for the first
}

// Key orders hits: by score, then id, both descending.
type Key struct {
	Score float64
	ID    uuid.UUID
}

// cursorList names search's cursors (api.EncodeCursor).
const cursorList = "search"

// String is the key inside a cursor; the score's shortest exact form, so the
// next page starts exactly where this one ended.
func (k Key) String() string {
	return strconv.FormatFloat(k.Score, 'g', -1, 64) + " " + k.ID.String()
}

// ParseKey reads a Key's String.
func ParseKey(s string) (*Key, error) {
	bad := pmapi.Invalid("cursor", "cursor is not one this search issued")
	score, id, ok := strings.Cut(s, " ")
	if !ok {
		return nil, bad
	}
	var k Key
	var err error
	if k.Score, err = strconv.ParseFloat(score, 64); err != nil {
		return nil, bad
	}
	if k.ID, err = uuid.Parse(id); err != nil {
		return nil, bad
	}
	return &k, nil
}

// Run searches sources for q and returns at most limit items, best first, and
// the key of the last one when more follow (nil on the last page). It is one
// round trip: the threshold, the workspace and the query travel as one batch.
func Run(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	q string,
	sources []facet.Search,
	f Filter,
	limit int,
) ([]Item, *Key, error) {
	if f.Status != "" {
		sources = withStatus(sources)
	}
	items := []Item{}
	if len(sources) == 0 {
		return items, nil, nil
	}
	sql, args := query(sources, f, limit+1, ws, q)
	prefixes := map[string]string{}
	for _, s := range sources {
		prefixes[s.Type] = s.IDPrefix
	}
	var ids []uuid.UUID
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		// Set the way the workspace is: on Citus only SET LOCAL reaches the
		// workers that run the query.
		shard.QueueLocalSetting(b, trigramThreshold)
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
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
				ids = append(ids, id)
			}
			return rows.Err()
		})
	})
	if err != nil {
		return nil, nil, err
	}
	if len(items) <= limit {
		return items, nil, nil
	}
	return items[:limit], &Key{Score: items[limit-1].Score, ID: ids[limit-1]}, nil
}

// withStatus keeps the sources that have a status.
func withStatus(sources []facet.Search) []facet.Search {
	var kept []facet.Search
	for _, s := range sources {
		if s.Status != "" {
			kept = append(kept, s)
		}
	}
	return kept
}

// ValidStatus checks status against the statuses of the chosen sources.
func ValidStatus(sources []facet.Search, status string) error {
	if status == "" {
		return nil
	}
	var allowed []string
	for _, s := range sources {
		for _, st := range s.Statuses {
			if st == status {
				return nil
			}
			if !slices.Contains(allowed, st) {
				allowed = append(allowed, st)
			}
		}
	}
	return pmapi.Invalid("status", "status must be a status of a searched type: %s", strings.Join(allowed, ", ")).
		With("allowed", allowed)
}
