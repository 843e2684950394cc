package observability

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
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
