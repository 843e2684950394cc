package charts

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	dashboardFile = "pmapi/dashboards/pmapi.json"
	rulesFile     = "pmapi/rules/pmapi-alerts.yaml"
	rulesTestFile = "tests/pmapi-alerts.test.yaml"
	runbooksFile  = "../docs/operations.md"
	runbookBase   = "https://github.com/pmapi/pmapi/blob/main/docs/operations.md#"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type dashboard struct {
	Templating struct {
		List []struct{ Name string } `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func loadDashboard(t *testing.T) (dashboard, []string) {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal([]byte(read(t, dashboardFile)), &d); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardFile, err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	return d, exprs
}

// selector is a metric name of pmapi's (or up) with its label matchers.
var selector = regexp.MustCompile(`\b(pmapi_[a-z_]+|up)(\{[^}]*\})?`)

func TestDashboardIsScopedToOneRelease(t *testing.T) {
	d, exprs := loadDashboard(t)
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, want := range []string{"datasource", "namespace", "job"} {
		if !vars[want] {
			t.Errorf("the dashboard has no %q variable", want)
		}
	}
	ids := map[int]bool{}
	circuits := false
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		circuits = circuits || strings.Contains(p.Title, "Open webhook circuits")
	}
	if !circuits {
		t.Error(`the dashboard has no "Open webhook circuits" panel`)
	}
	if len(exprs) < 20 {
		t.Errorf("only %d queries in the dashboard", len(exprs))
	}
	for _, e := range exprs {
		for _, m := range selector.FindAllStringSubmatch(e, -1) {
			if !strings.Contains(m[2], `namespace="$namespace"`) || !strings.Contains(m[2], `job="$job"`) {
				t.Errorf("%s in %q is not limited to $namespace and $job", m[1], e)
			}
		}
	}
}

// queueGauge is a use of a gauge that every pod reports alike.
var (
	queueGauge = regexp.MustCompile(
		`pmapi_webhook_(queue_depth|oldest_pending_age_seconds|queue_up|circuits_open)\b`,
	)
	queueGaugeMaxed = regexp.MustCompile(
		`max by \([^)]*\bshard\b[^)]*\) \(pmapi_webhook_(queue_depth|oldest_pending_age_seconds|queue_up|circuits_open)\b`,
	)
	alertName        = regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`)
	runbookURL       = regexp.MustCompile(`(?m)^\s*runbook_url: (\S+)$`)
	heading          = regexp.MustCompile(`(?m)^#{2,4} (.+)$`)
	notAnchorChars   = regexp.MustCompile(`[^a-z0-9 _-]`)
	testedAlertname  = regexp.MustCompile(`^\s*alertname: (\S+)$`)
	expAlertsNone    = regexp.MustCompile(`^\s*exp_alerts: \[\]$`)
	expAlertsSome    = regexp.MustCompile(`^\s*exp_alerts:$`)
	commentOrBlankRe = regexp.MustCompile(`^\s*(#.*)?$`)
)

// TestQueueGaugesAreNeverSummedOverPods: every serve and work pod samples the
// same shard, so a sum multiplies the queue by the pod count.
func TestQueueGaugesAreNeverSummedOverPods(t *testing.T) {
	_, exprs := loadDashboard(t)
	for name, text := range map[string]string{dashboardFile: strings.Join(exprs, "\n"), rulesFile: read(t, rulesFile)} {
		uses, maxed := len(queueGauge.FindAllString(text, -1)), len(queueGaugeMaxed.FindAllString(text, -1))
		if uses == 0 || uses != maxed {
			t.Errorf("%s: %d uses of the queue gauges, %d of them inside max by (shard); want all", name, uses, maxed)
		}
	}
}

// anchor is GitHub's anchor of a Markdown heading.
func anchor(h string) string {
	return strings.ReplaceAll(notAnchorChars.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
}

func TestEveryAlertHasARunbook(t *testing.T) {
	rules, docs := read(t, rulesFile), read(t, runbooksFile)
	sections := map[string]string{}
	for _, loc := range heading.FindAllStringSubmatchIndex(docs, -1) {
		end := len(docs)
		if next := heading.FindAllStringIndex(docs[loc[1]:], 1); next != nil {
			end = loc[1] + next[0][0]
		}
		sections[anchor(docs[loc[2]:loc[3]])] = docs[loc[1]:end]
	}
	alerts := alertName.FindAllStringSubmatch(rules, -1)
	urls := runbookURL.FindAllStringSubmatch(rules, -1)
	if len(alerts) < 10 || len(alerts) != len(urls) {
		t.Fatalf(
			"%d alerts and %d runbook_url annotations in %s; want one each, at least 10",
			len(alerts),
			len(urls),
			rulesFile,
		)
	}
	for i, a := range alerts {
		name := a[1]
		want := runbookBase + strings.ToLower(name)
		if urls[i][1] != want {
			t.Errorf("%s: runbook_url %s, want %s", name, urls[i][1], want)
		}
		body, ok := sections[strings.ToLower(name)]
		if !ok {
			t.Errorf("%s: docs/operations.md has no section headed %q", name, name)
			continue
		}
		for _, part := range []string{"What it means", "How to check", "What to do"} {
			if !strings.Contains(body, part) {
				t.Errorf("%s: its runbook section does not say %q", name, part)
			}
		}
	}
}

func TestEveryAlertIsTestedFiringAndNot(t *testing.T) {
	firing, quiet := map[string]bool{}, map[string]bool{}
	lines := strings.Split(read(t, rulesTestFile), "\n")
	for i, line := range lines {
		m := testedAlertname.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, next := range lines[i+1:] {
			if commentOrBlankRe.MatchString(next) {
				continue
			}
			firing[m[1]] = firing[m[1]] || expAlertsSome.MatchString(next)
			quiet[m[1]] = quiet[m[1]] || expAlertsNone.MatchString(next)
			break
		}
	}
	for _, a := range alertName.FindAllStringSubmatch(read(t, rulesFile), -1) {
		if !firing[a[1]] || !quiet[a[1]] {
			t.Errorf("%s: %s tests it firing %v, not firing %v; want both", a[1], rulesTestFile, firing[a[1]], quiet[a[1]])
		}
	}
}

// TestDashboardQueriesAreValidPromQL has promtool parse every query, as
// recording rules with the variables filled in.
func TestDashboardQueriesAreValidPromQL(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not on PATH; make test puts it in .tools/bin (charts/tools.sh)")
		}
		t.Skip("promtool not on PATH (make test puts it in .tools/bin)")
	}
	_, exprs := loadDashboard(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	fill := strings.NewReplacer("$namespace", "prod", "$job", "pmapi")
	for i, e := range exprs {
		q, _ := json.Marshal(fill.Replace(e))
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}
