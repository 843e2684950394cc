package main

import (
	"context"

	"github.com/pmapi/pmapi/migrations"
)

// warnUnindexedSearch says, once at start, on which shards search reads whole
// tables because the migration role could not mark search's functions
// LEAKPROOF: the server works, but an operator sees why search is slow.
func (s *server) warnUnindexedSearch(ctx context.Context) {
	for _, sh := range s.shards.All() {
		usable, err := migrations.SearchIndexesUsable(ctx, sh.Pool)
		if err != nil {
			s.log.Warn("could not check search's indexes", "shard", sh.Name, "err", err)
			continue
		}
		if !usable {
			s.log.Warn(
				"search cannot use its indexes on this shard and reads whole tables: "+
					"a superuser must mark its functions LEAKPROOF (docs/operations.md)",
				"shard",
				sh.Name,
				"statements",
				migrations.SearchLeakproof,
			)
		}
	}
}
