package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SearchLeakproof marks the functions behind search's indexed operators (the
// tsvector @@ tsquery match and pg_trgm's strict word similarity, both ways
// round) LEAKPROOF. PostgreSQL uses an index for a condition on a table with
// row-level security only when the condition's functions are LEAKPROOF (they
// cannot reveal a row the policy hides, through an error say); these are not
// marked so, and without the mark every search reads the workspace's whole
// table. None of them raises an error that depends on a row's text
// (docs/decisions/search.md). Only a superuser may mark a function, so the migrations
// cannot: MarkSearchLeakproof does it when it may, and operators whose
// migration role is not a superuser run these once per database, on every node
// (docs/operations.md).
var SearchLeakproof = []string{
	"alter function pg_catalog.ts_match_vq(tsvector, tsquery) leakproof",
	"alter function strict_word_similarity_commutator_op(text, text) leakproof",
	"alter function strict_word_similarity_op(text, text) leakproof",
}

// searchLeakproofQuery counts the functions of SearchLeakproof that are marked.
const searchLeakproofQuery = `select count(*) from pg_proc where proleakproof and oid in (
	'pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure,
	'strict_word_similarity_commutator_op(text, text)'::regprocedure,
	'strict_word_similarity_op(text, text)'::regprocedure)`

// SearchIndexesUsable reports whether conn's database has every function of
// SearchLeakproof marked, that is whether search can use its indexes.
func SearchIndexesUsable(ctx context.Context, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (bool, error) {
	var n int
	if err := conn.QueryRow(ctx, searchLeakproofQuery).Scan(&n); err != nil {
		return false, fmt.Errorf("search functions: %w", err)
	}
	return n == len(SearchLeakproof), nil
}

// MarkSearchLeakproof marks SearchLeakproof's functions in the database at
// url when its role is a superuser, and reports whether they are marked
// afterwards (already, or now). A role that may not mark them is not an
// error: the caller says what to run.
func MarkSearchLeakproof(ctx context.Context, url string) (bool, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(ctx) }()
	if ok, err := SearchIndexesUsable(ctx, conn); err != nil || ok {
		return ok, err
	}
	var super bool
	if err := conn.QueryRow(ctx, "select rolsuper from pg_roles where rolname = current_user").Scan(&super); err != nil {
		return false, err
	}
	if !super {
		return false, nil
	}
	for _, stmt := range SearchLeakproof {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return false, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return true, nil
}
