package api_test

import (
	"encoding/pem"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// TestIsolationProperty drives randomized, interleaved request streams of
// three workspaces over every operation the server declares, black box over
// HTTP: each workspace writes texts from one shared vocabulary (so similarity,
// look-across, suggestions and search would find the others' records if they
// could) plus a word of its own; it uses the ids of the other workspaces with
// its own credentials in paths, bodies and list filters, and searches for the
// other workspaces' words. No answer may carry another workspace's id or word,
// a foreign id is 404 NOT_FOUND (or what the contract says for that place),
// and nothing is a 5xx. An operation the generator cannot drive fails the test
// unless isoSkipped names it with a reason.
//
// PMAPI_ISOLATION_SEED=<n> replays a run; the seed is printed on failure.
func TestIsolationProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PMAPI_ISOLATION_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PMAPI_ISOLATION_SEED: %v", err)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: PMAPI_ISOLATION_SEED=%d replays this run", seed, seed)
		}
	})
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	caFile := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(caFile, certPEM(rcv), 0o600); err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.NewSender(true, caFile)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.New(t, func(d *apitest.Config) {
		d.WebhookAllowLoopback = true
		d.WebhookSender = sender
		// The stream outruns a key's 600 a minute; 429s would test nothing.
		d.RateLimitPerMinute = 1_000_000_000
	})
	env.StartWorkers(t, func(o *jobs.Options) {
		o.Schedule = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond,
			50 * time.Millisecond, 50 * time.Millisecond}
		o.PollInterval = 50 * time.Millisecond
		o.Engine = isoEngine{}
	})
	s := newIsoRun(t, env, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rcv.URL)
	ops := s.driveable()
	start := time.Now()
	s.setup()
	// Every operation once in each mode, then a random stream.
	for _, foreign := range []bool{false, true} {
		for _, i := range s.rnd.Perm(len(ops)) {
			s.step(ops[i], foreign)
		}
	}
	for range isoSteps {
		s.step(ops[s.rnd.IntN(len(ops))], s.rnd.IntN(2) == 0)
	}
	s.ownUntilSucceeded(ops)
	s.finalSweep()
	s.coverage(ops)
	t.Logf("%d requests over %d operations, 3 workspaces, %d random steps, %v", s.requests, len(ops), isoSteps,
		time.Since(start).Round(time.Millisecond))
}

// isoSteps bounds the random stream: the whole test stays well under 20 s.
const isoSteps = 1500

// isoSkipped are the operations the generator does not drive, each with why.
var isoSkipped = map[string]string{
	"GET /openapi/v1/openapi.json":         "public document, no workspace data",
	"GET /healthz":                         "process health, no workspace data",
	"GET /readyz":                          "database readiness, no workspace data",
	"GET /docs":                            "static reference page, no workspace data",
	"GET /docs/{file}":                     "static scripts of the reference page, no workspace data",
	"GET /openapi/v1/webhooks/event-types": "public list of event types, no workspace data",

	"POST /admin/v1/workspaces":                                         isoByDesign,
	"GET /admin/v1/workspaces":                                          isoByDesign,
	"GET /admin/v1/workspaces/{workspaceId}":                            isoByDesign,
	"POST /admin/v1/workspaces/{workspaceId}/suspend":                   isoByDesign,
	"POST /admin/v1/workspaces/{workspaceId}/resume":                    isoByDesign,
	"PUT /admin/v1/workspaces/{workspaceId}/shard":                      isoByDesign,
	"POST /admin/v1/workspaces/{workspaceId}/users":                     isoByDesign + " (used in set-up)",
	"POST /admin/v1/workspaces/{workspaceId}/users/{userId}/sessions":   isoByDesign,
	"PUT /admin/v1/workspaces/{workspaceId}/apps/{clientId}/rate-limit": isoByDesign,
	"GET /admin/v1/workspaces/{workspaceId}/quotas":                     isoByDesign,
	"PUT /admin/v1/workspaces/{workspaceId}/quotas":                     isoByDesign,
	"GET /admin/v1/workspaces/{workspaceId}/audit":                      isoByDesign,
	"GET /admin/v1/workspaces/{workspaceId}/placement":                  "operator token, Citus placement",
	"POST /admin/v1/workspaces/{workspaceId}/isolate":                   "operator token, Citus placement",
	"POST /admin/v1/workspaces/{workspaceId}/move":                      "operator token, Citus placement",
	"GET /admin/v1/workspaces/{workspaceId}/export": isoByDesign +
		" (tenant/workspacedata's tests: no other workspace's row in an export)",
	"DELETE /admin/v1/workspaces/{workspaceId}": isoByDesign +
		" (tenant/workspacedata's tests: another workspace keeps every row)",

	"POST /openapi/v1/oauth/device/code": "public RFC 8628 endpoint keyed by client id (used to drive oauthApprove)",
	"POST /openapi/v1/oauth/token": "RFC 6749 token endpoint: codes, not workspace ids; " +
		"TestOAuthTenantIsolation",
	"POST /openapi/v1/oauth/refresh":    "RFC 6749 refresh: tokens, not workspace ids; TestOAuthTenantIsolation",
	"POST /openapi/v1/oauth/revoke":     "RFC 7009: tokens, not workspace ids",
	"POST /openapi/v1/oauth/introspect": "RFC 7662: tokens, not workspace ids",

	"GET /openapi/v1/oauth/jwks.json":             "public signing keys",
	"GET /.well-known/oauth-authorization-server": "public metadata",
	"GET /openapi/v1/oauth/device":                "HTML page; its approval is oauthApprove, driven here",
	"POST /openapi/v1/oauth/device":               "HTML form; its approval is oauthApprove, driven here",
}

// isoByDesign is why an operator route is not driven.
const isoByDesign = "operator token: spans every workspace by design"

// isoOwnOnly are driven operations that take no id another workspace could
// own, so they have no foreign mode.
var isoOwnOnly = map[string]string{
	"GET /openapi/v1/session": "the session's own workspace",
	"GET /openapi/v1/me":      "the credential's own workspace",
	"GET /openapi/v1/apps":    "the session's own apps",
	"GET /openapi/v1/audit":   "the session's own workspace's log",
}

// ownUntilSucceeded drives, in own mode, each operation that has not yet
// succeeded for its own workspace, a few times more: a random own call may be
// refused for a reason of its own (a status move the table does not allow, a
// row archived by an earlier step), and only a driver that never succeeds
// tests nothing.
func (s *isoRun) ownUntilSucceeded(ops []string) {
	for _, op := range ops {
		for try := 0; try < isoOwnRetries && (s.stats[op] == nil || s.stats[op].ownOK == 0); try++ {
			s.step(op, false)
		}
	}
}

// isoOwnRetries bounds ownUntilSucceeded: a working driver whose calls fail
// one time in three fails 20 in a row about once in 3.5 billion runs.
const isoOwnRetries = 20

// coverage fails an operation that never succeeded for its own workspace or
// was never tried with another's ids: its driver tests nothing.
func (s *isoRun) coverage(ops []string) {
	for _, op := range ops {
		st := s.stats[op]
		if st == nil || st.ownOK == 0 {
			s.t.Errorf("%s never succeeded for its own workspace (%+v): its driver tests nothing", op, st)
		}
		if _, ok := isoOwnOnly[op]; !ok && (st == nil || st.foreign == 0) {
			s.t.Errorf("%s was never tried with another workspace's ids", op)
		}
	}
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
