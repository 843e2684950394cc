package pgcluster

import (
	"context"
	"net/url"
)

// SearchLeakproof lists the functions behind search's indexed operators (the
// tsvector @@ tsquery match and pg_trgm's strict word similarity, both ways
// round). PostgreSQL uses an index for a condition on a table with row-level
// security only when the condition's functions are LEAKPROOF (they cannot
// reveal a row the policy hides, through an error say); these are not marked
// so, and without the mark every search reads the workspace's whole table.
// None of them raises an error that depends on a row's text. Only a superuser
// may mark a function, so this is a step of provisioning, after the
// migrations (which create pg_trgm), run in each database on every node
// (docs/operations.md).
var SearchLeakproof = []string{
	"alter function pg_catalog.ts_match_vq(tsvector, tsquery) leakproof",
	"alter function strict_word_similarity_commutator_op(text, text) leakproof",
	"alter function strict_word_similarity_op(text, text) leakproof",
}

// MarkSearchLeakproof runs SearchLeakproof in database name on every node, as
// the superuser of adminURL. Marking twice is harmless.
func MarkSearchLeakproof(ctx context.Context, adminURL, name string) error {
	top, err := Discover(ctx, adminURL)
	if err != nil {
		return err
	}
	return onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		u, err := url.Parse(nodeURL)
		if err != nil {
			return err
		}
		u.Path = "/" + name
		return execOn(ctx, u.String(), SearchLeakproof...)
	})
}
