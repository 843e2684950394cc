package api_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/observability"
)

// BenchmarkRequestFixedCost is what every request costs before its own work:
// "healthz" is fasthttp, Fiber and the global middleware (request id, access
// line, metrics, recover, query check) around a handler that does nothing;
// "keyed" adds the key check and the rate limit, ending in a 400 decided
// before any SQL, so no PostgreSQL time is in either. The access line goes
// through pmapi serve's own logger and buffer (to io.Discard), not the test
// harness's growing buffer, whose copying would dominate
// (docs/decisions/reads.md):
//
//	bin/pmapi devdb exec -- go test -run '^$' -bench RequestFixedCost -benchmem ./api/
func BenchmarkRequestFixedCost(b *testing.B) {
	env := apitest.New(b, asServe(b))
	tn := env.NewTenant(b)
	handler := env.App.Handler()
	b.Run("healthz", func(b *testing.B) { measureHandler(b, handler, "/healthz", nil, 200) })
	b.Run("keyed", func(b *testing.B) { measureHandler(b, handler, apitest.TaskBase+"list?limit=abc", tn, 400) })
}

// asServe configures an app for a benchmark as pmapi serve runs: no rate
// limit in the way, and the access line through serve's own logger and 100
// ms buffer (to io.Discard).
func asServe(b *testing.B) func(d *apitest.Config) {
	lines := observability.NewLineBuffer(io.Discard, 100*time.Millisecond)
	b.Cleanup(func() { _ = lines.Close() })
	return func(d *apitest.Config) {
		d.RateLimitPerMinute = 1_000_000_000
		d.AccessLog = observability.NewLogger(lines.Buffered(), slog.LevelInfo, observability.FormatJSON)
	}
}
