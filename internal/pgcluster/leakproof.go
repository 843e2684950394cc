package pgcluster

import (
	"context"
	"net/url"

	"github.com/pmapi/pmapi/migrations"
)

// MarkSearchLeakproof runs migrations.SearchLeakproof in database name on
// every node, as the superuser of adminURL: search's indexes are usable under
// row-level security only with the mark. Marking twice is harmless.
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
		return execOn(ctx, u.String(), migrations.SearchLeakproof...)
	})
}
