package api_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestMain(m *testing.M) {
	// The parallel tests wait on the database and on timers (OAuth polling
	// intervals, token lifetimes) far more than they compute (apitest.Run).
	code := apitest.Run(m)
	if code == 0 {
		code = checkScrapeAfterTraffic()
	}
	os.Exit(code)
}

// checkScrapeAfterTraffic takes a real scrape of this process's registry after
// the API tests' traffic (requests, auth outcomes, deliveries, jobs) and holds
// it to `promtool check metrics`. Without promtool it fails under CI and is
// skipped locally, as cmd/pmapi's scrape check is.
var idInLabel = regexp.MustCompile(
	`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-` +
		`|\b(pm_cli|pmk|pms|pmadm|whsec|evt|whk|act|rca|nod|run|lac|cac)_[A-Za-z0-9]{6,}` +
		`|(workspace|client_?id|key)="`,
)

// topWorkspacesGauge is tenant/usage's gauge of the ten busiest workspaces,
// the one metric a workspace labels.
const topWorkspacesGauge = "pmapi_usage_top_workspace_requests_per_second"

func checkScrapeAfterTraffic() int {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "promtool is not installed; make test installs it (Debian package prometheus)")
			return 1
		}
		return 0
	}
	rec := httptest.NewRecorder()
	promhttp.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(rec.Body.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(
			os.Stderr,
			"promtool check metrics on the scrape after the API tests: %v\n%s\n%.3000s\n",
			err,
			out,
			rec.Body.String(),
		)
		return 1
	}
	// No label carries a workspace, key or id: no UUIDs, no prefixed ids or
	// credentials, no workspace or client label. The one exception is the
	// usage gauge of the busiest workspaces, bounded by design to ten series.
	top := 0
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, topWorkspacesGauge+"{") {
			if top++; top > 10 {
				fmt.Fprintf(os.Stderr, "%s has more than ten series: %s\n", topWorkspacesGauge, line)
				return 1
			}
			continue
		}
		if leak := idInLabel.FindString(line); leak != "" {
			fmt.Fprintf(os.Stderr, "a metric label carries an id or credential (%s): %s\n", leak, line)
			return 1
		}
	}
	if testing.Verbose() {
		fmt.Printf("promtool check metrics: ok on a %d-byte scrape after the API tests\n", rec.Body.Len())
	}
	return 0
}
