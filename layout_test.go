package pmapi_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the import path every package of this repository starts with.
const module = "github.com/pmapi/pmapi"

// goPackage is one package of the module as `go list` sees it: its path
// relative to the module ("" is the root package pmapi) and what its
// non-test code imports of the module.
type goPackage struct {
	Path    string
	Imports []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		p := goPackage{Path: relative(fields[0])}
		for _, imp := range fields[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				p.Imports = append(p.Imports, relative(imp))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func relative(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

// displayName is how docs/architecture.md names a package: the root is
// `pmapi`.
func displayName(path string) string {
	if path == "" {
		return "pmapi"
	}
	return path
}

// architectureSection returns the lines of docs/architecture.md's section
// headed heading.
func architectureSection(t *testing.T, heading string) []string {
	t.Helper()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## "+heading
			continue
		}
		if in {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("docs/architecture.md has no section %q", heading)
	}
	return lines
}

var (
	tableRow = regexp.MustCompile(`^\| *([^|]*?) *\|`)
	codeSpan = regexp.MustCompile("`([^`]+)`")
)

// TestArchitectureTableNamesEveryPackage holds docs/architecture.md's
// package table to the module: no row for a package that does not exist,
// no package without a row.
func TestArchitectureTableNamesEveryPackage(t *testing.T) {
	t.Parallel()
	documented := map[string]bool{}
	for _, line := range architectureSection(t, "Packages") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if name := codeSpan.FindStringSubmatch(m[1]); name != nil {
			if documented[name[1]] {
				t.Errorf("docs/architecture.md names %s twice", name[1])
			}
			documented[name[1]] = true
		}
	}
	exists := map[string]bool{}
	for _, p := range listPackages(t) {
		name := displayName(p.Path)
		exists[name] = true
		if !documented[name] {
			t.Errorf("package %s is missing from docs/architecture.md's package table", name)
		}
	}
	for name := range documented {
		if !exists[name] {
			t.Errorf("docs/architecture.md's package table names %s, which is not a package", name)
		}
	}
}

// TestImportsFollowTheLayers holds every import of the module's production
// code to the layer order of docs/architecture.md: a package imports only
// packages of its own layer or a lower one.
func TestImportsFollowTheLayers(t *testing.T) {
	t.Parallel()
	layer := map[string]int{}
	n := 0
	for _, line := range architectureSection(t, "Layers") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil || !strings.Contains(line, "`") {
			continue
		}
		n++
		cells := strings.Split(line, "|")
		for _, name := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
			if _, twice := layer[name[1]]; twice {
				t.Errorf("docs/architecture.md puts %s in two layers", name[1])
			}
			layer[name[1]] = n
		}
	}
	if n < 2 {
		t.Fatalf("docs/architecture.md's layer table has %d layers", n)
	}
	pkgs := listPackages(t)
	for _, p := range pkgs {
		from, ok := layer[displayName(p.Path)]
		if !ok {
			t.Errorf("package %s has no layer in docs/architecture.md", displayName(p.Path))
			continue
		}
		for _, imp := range p.Imports {
			to, ok := layer[displayName(imp)]
			if ok && to > from {
				t.Errorf(
					"%s (layer %d) imports %s (layer %d): an arrow up the layers",
					displayName(p.Path),
					from,
					displayName(imp),
					to,
				)
			}
		}
	}
	for name := range layer {
		if !slices.ContainsFunc(pkgs, func(p goPackage) bool { return displayName(p.Path) == name }) {
			t.Errorf("docs/architecture.md's layer table names %s, which is not a package", name)
		}
	}
}

// issueNumber is a reference to a tracker's issue: the word, then a number
// (with or without "#"). The product speaks of itself, and the history of
// how it got here lives in git.
var issueNumber = regexp.MustCompile(`(?i)\bissues? ?#?[0-9]+`)

// TestNoIssueNumbers looks through every file git tracks (code, tests,
// migrations, docs) for an issue number.
func TestNoIssueNumbers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		text, err := os.ReadFile(name)
		if err != nil || bytes.IndexByte(text, 0) >= 0 {
			continue // gone from the work tree, or binary
		}
		for i, line := range strings.Split(string(text), "\n") {
			if m := issueNumber.FindString(line); m != "" {
				t.Errorf("%s:%d names %q", name, i+1, m)
			}
		}
	}
}
