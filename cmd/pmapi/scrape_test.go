package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var metricName = regexp.MustCompile(`pmapi_[a-z_]+`)

// checkScrape holds a real scrape to the monitoring that ships with the chart:
// promtool accepts it, and every metric the dashboard and the alert rules query
// is in it.
func checkScrape(t *testing.T, scrape []byte) {
	t.Helper()
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(scrape)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") != "" {
		t.Error("promtool is not on PATH; make test puts it in .tools/bin (charts/tools.sh)")
	} else {
		t.Log("promtool not on PATH: skipping promtool check metrics (make test puts it in .tools/bin)")
	}
	root := filepath.Join("..", "..", "charts", "pmapi")
	dash, err := os.ReadFile(filepath.Join(root, "dashboards", "pmapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed map[string]any
	if err := json.Unmarshal(dash, &parsed); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	rules, err := os.ReadFile(filepath.Join(root, "rules", "pmapi-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(scrape)
	seen := map[string]bool{}
	for _, name := range metricName.FindAllString(string(dash)+string(rules), -1) {
		if seen[name] {
			continue
		}
		seen[name] = true
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suffix)
		}
		if !strings.Contains(text, "\n"+name) && !strings.Contains(text, "# TYPE "+base+" ") {
			t.Errorf("the dashboard or the alert rules query %s, which the scrape does not have", name)
		}
	}
	if len(seen) < 8 {
		t.Errorf("only %d metrics found in the dashboard and rules", len(seen))
	}
}
