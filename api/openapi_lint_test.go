package api_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// lintTools is where make test installs the pinned linters (npm ci).
const lintTools = "../tools/openapi"

// TestDocumentLints runs Redocly CLI (recommended rules) and Spectral
// (spectral:oas) over the served document, with the rules the project turned
// off by name and why in tools/openapi's configuration: neither may report
// an error or a warning. make test installs the linters; without them the
// test skips, unless PMAPI_OPENAPI_LINT=require (what make test sets).
func TestDocumentLints(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	doc := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/openapi.json"})
	if out := os.Getenv("PMAPI_OPENAPI_OUT"); out != "" {
		// Where to look at the document the linters saw.
		if err := os.WriteFile(out, doc.Raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(lintTools, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "redocly")); err != nil {
		if os.Getenv("PMAPI_OPENAPI_LINT") == "require" {
			t.Fatalf("the linters are not installed in %s (make test runs npm ci there): %v", lintTools, err)
		}
		t.Skipf("the OpenAPI linters are not installed (cd %s && npm ci); make test installs and runs them", lintTools)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, doc.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("redocly", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command(filepath.Join(bin, "redocly"), "lint", "--config", filepath.Join(lintTools, "redocly.yaml"),
			"--format", "json", file)
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
		out, _ := cmd.Output()
		var report struct {
			Totals   struct{ Errors, Warnings int } `json:"totals"`
			Problems []struct {
				RuleID   string `json:"ruleId"`
				Severity string `json:"severity"`
				Message  string `json:"message"`
				Location []struct {
					Pointer string `json:"pointer"`
				} `json:"location"`
			} `json:"problems"`
		}
		if err := json.Unmarshal(out, &report); err != nil {
			t.Fatalf("redocly lint did not report JSON: %v\n%s", err, out)
		}
		for _, p := range report.Problems {
			where := ""
			if len(p.Location) > 0 {
				where = p.Location[0].Pointer
			}
			t.Errorf("redocly %s %s: %s at %s", p.Severity, p.RuleID, p.Message, where)
		}
		if report.Totals.Errors+report.Totals.Warnings > 0 {
			t.Errorf("redocly: %d errors, %d warnings", report.Totals.Errors, report.Totals.Warnings)
		}
	})
	t.Run("spectral", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command(filepath.Join(bin, "spectral"), "lint", "--ruleset", filepath.Join(lintTools, ".spectral.yaml"),
			"--fail-severity", "warn", "--display-only-failures", file)
		if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
			t.Errorf("spectral: %v\n%s", err, out)
		}
	})
}
