package migrations_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
)

// TestMarkSearchLeakproofNeedsASuperuser: on a database whose search functions
// are not marked, the owner role (what `pmapi migrate up` runs as in
// production) cannot mark them and is told so (false, no error); a superuser
// marks them, after which SearchIndexesUsable says the indexes can be used.
func TestMarkSearchLeakproofNeedsASuperuser(t *testing.T) {
	ctx := context.Background()
	db := testdb.ExtraDatabase(t)
	admin, err := url.Parse(testdb.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin.Path = "/" + db.Name
	super := testdb.Conn(t, admin.String())
	for _, fn := range []string{
		"pg_catalog.ts_match_vq(tsvector, tsquery)",
		"strict_word_similarity_commutator_op(text, text)",
		"strict_word_similarity_op(text, text)",
	} {
		if _, err := super.Exec(ctx, "alter function "+fn+" not leakproof"); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := migrations.SearchIndexesUsable(ctx, super); err != nil || ok {
		t.Fatalf("usable %v (%v) with the marks taken off", ok, err)
	}
	if ok, err := migrations.MarkSearchLeakproof(ctx, db.OwnerURL); err != nil || ok {
		t.Fatalf("the owner role marked them: %v (%v); only a superuser may", ok, err)
	}
	if ok, err := migrations.MarkSearchLeakproof(ctx, admin.String()); err != nil || !ok {
		t.Fatalf("a superuser did not mark them: %v (%v)", ok, err)
	}
	if ok, err := migrations.SearchIndexesUsable(ctx, super); err != nil || !ok {
		t.Fatalf("usable %v (%v) after the superuser marked them", ok, err)
	}
}
