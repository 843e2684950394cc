package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestReadyzAnswersForTheShards checks /readyz without credentials: 200 while
// the readiness check (every shard reachable and migrated; see cmd/pmapi) passes,
// 503 SERVICE_UNAVAILABLE with Retry-After when it does not, with the failure logged. Both answers are
// validated against the document.
func TestReadyzAnswersForTheShards(t *testing.T) {
	t.Parallel()
	var failure error
	env := apitest.New(t, func(d *apitest.Config) {
		d.Ready = func(context.Context) error { return failure }
	})
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/readyz"})
	if r.Status != 200 || r.Body["status"] != "ok" {
		t.Fatalf("ready: %d %s", r.Status, r.Raw)
	}
	failure = errors.New("shard eu-2: migration 0042_x is not applied; run pmapi migrate up")
	notReady := env.Do(t, apitest.Request{Method: "GET", Path: "/readyz"})
	apitest.WantError(t, notReady, 503, "SERVICE_UNAVAILABLE")
	// Every 503 says when to come back (a placement switch-over answers the same).
	if ra := notReady.Header.Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After %q on a 503, want 2", ra)
	}
	// The unauthenticated answer carries no internals; the log names the shard.
	if !strings.Contains(env.Logs.String(), "shard eu-2") {
		t.Error("the not-ready log line does not name the shard")
	}
	if h := env.Do(t, apitest.Request{Method: "GET", Path: "/healthz"}); h.Status != 200 {
		t.Errorf("healthz while not ready: %d", h.Status)
	}
}
