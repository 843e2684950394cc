package observability

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsListenerServesProfiles: pprof is on the metrics listener (never the
// API port), next to /metrics and /healthz.
func TestMetricsListenerServesProfiles(t *testing.T) {
	m, err := ListenMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go m.Serve(slog.New(slog.DiscardHandler))
	defer m.Shutdown(context.Background())
	for path, want := range map[string]string{
		"/debug/pprof/":                  "goroutine",
		"/debug/pprof/heap?debug=1":      "heap profile",
		"/debug/pprof/goroutine?debug=1": "goroutine profile",
		"/healthz":                       "ok",
	} {
		resp, err := http.Get("http://" + m.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d, want 200 containing %q", path, resp.StatusCode, want)
		}
	}
}

func TestReadyFollowsTheCheckAtScrapeTime(t *testing.T) {
	failing := errors.New("shard default: unreachable")
	var err error
	RegisterReadiness(func(context.Context) error { return err })
	for _, want := range []float64{1, 0, 1} {
		if want == 0 {
			err = failing
		} else {
			err = nil
		}
		mfs, gerr := prometheus.DefaultGatherer.Gather()
		if gerr != nil {
			t.Fatal(gerr)
		}
		got := -1.0
		for _, mf := range mfs {
			if mf.GetName() == "pmapi_ready" {
				got = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if got != want {
			t.Errorf("pmapi_ready = %v with check error %v, want %v", got, err, want)
		}
	}
}
