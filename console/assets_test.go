package console_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/console"
)

// TestEmbeddedHTMXIsTheNamedRelease: the committed htmx is the release
// HTMXVersion and README.md name, with its licence beside it.
func TestEmbeddedHTMXIsTheNamedRelease(t *testing.T) {
	t.Parallel()
	js, err := os.ReadFile("assets/htmx.min.js")
	if err != nil || !strings.Contains(string(js), `version:"`+console.HTMXVersion+`"`) {
		t.Errorf("assets/htmx.min.js is not htmx %s: %v", console.HTMXVersion, err)
	}
	if lic, err := os.ReadFile("assets/htmx.LICENSE"); err != nil || !strings.Contains(string(lic), "BSD") {
		t.Errorf("assets/htmx.LICENSE: %v", err)
	}
	readme, _ := os.ReadFile("../README.md")
	if !strings.Contains(string(readme), "htmx "+console.HTMXVersion) {
		t.Errorf("README.md's dependencies do not name htmx %s", console.HTMXVersion)
	}
}
