package api_test

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// requestSeries returns pmapi_http_requests_total's series as label maps with
// their values.
func requestSeries(t *testing.T) map[*map[string]string]float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[*map[string]string]float64{}
	for _, f := range families {
		if f.GetName() != "pmapi_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[&labels] = m.GetCounter().GetValue()
		}
	}
	return out
}

func countOf(t *testing.T, want map[string]string) float64 {
	t.Helper()
	var n float64
	for labels, v := range requestSeries(t) {
		match := true
		for k, w := range want {
			match = match && (*labels)[k] == w
		}
		if match {
			n += v
		}
	}
	return n
}

var codeShape = regexp.MustCompile(`^([A-Z_]+)?$`)

// TestRequestCounterCarriesTheErrorCode: a 429 is counted with code
// RATE_LIMITED, so an alert can tell rate limiting from other 4xx; successes
// and answers without an envelope (OAuth's RFC 6749 errors) carry "". Every
// code the counter carries is one of the closed set, with its own status.
func TestRequestCounterCarriesTheErrorCode(t *testing.T) {
	env := apitest.New(t, func(c *apitest.Config) { c.RateLimitPerMinute = 1 })
	tn := env.NewTenant(t)
	const route = "/openapi/v1/me"
	limited := map[string]string{"route": route, "status_class": "4xx", "code": "RATE_LIMITED"}
	ok := map[string]string{"route": route, "status_class": "2xx", "code": ""}
	beforeLimited, beforeOK := countOf(t, limited), countOf(t, ok)
	if r := tn.Do(t, "GET", route, nil); r.Status != http.StatusOK {
		t.Fatalf("first call: %d", r.Status)
	}
	if r := tn.Do(t, "GET", route, nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("second call within the minute: %d", r.Status)
	}
	if got := countOf(t, limited) - beforeLimited; got != 1 {
		t.Errorf("RATE_LIMITED answers counted: %v, want 1", got)
	}
	if got := countOf(t, ok) - beforeOK; got != 1 {
		t.Errorf("successes counted with code \"\": %v, want 1", got)
	}
	oauth := map[string]string{"route": "/openapi/v1/oauth/token", "status_class": "4xx", "code": ""}
	before := countOf(t, oauth)
	unsupported := apitest.Request{
		Method: "POST", Path: "/openapi/v1/oauth/token", Body: map[string]string{"grant_type": "password"},
	}
	if r := env.Do(t, unsupported); r.Status != 400 {
		t.Fatalf("unsupported grant: %d", r.Status)
	}
	if got := countOf(t, oauth) - before; got != 1 {
		t.Errorf("an RFC 6749 error counted with code \"\": %v, want 1", got)
	}
	for labels := range requestSeries(t) {
		code, class := (*labels)["code"], (*labels)["status_class"]
		if !codeShape.MatchString(code) {
			t.Errorf("code label %q", code)
		}
		if code != "" && strconv.Itoa(api.StatusOf(pmapi.Code(code))/100)+"xx" != class {
			t.Errorf("code %s counted as %s", code, class)
		}
	}
}
