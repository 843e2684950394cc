// Package quality is the labelled benchmark of root-cause analyses: a dataset
// of analyses in several domains (data/*.rca), loaded into a workspace through
// the API, and the measures of what the API answers about them: how well
// GET .../similar ranks an analysis's true twin (top-1, recall@5, MRR for
// near-duplicates, paraphrases, hard negatives and early analyses), and how
// precise 5-why and look-across suggestions are. `make bench-quality` runs all
// of it against a real server; a test in resource/rrca runs the measure-only
// split and holds the floors (docs/performance.md, "Root-cause analysis
// quality").
package quality

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed data/*.rca
var files embed.FS

// The sets a query analysis belongs to. Base analyses are the closed ones a
// query is matched against; every other set is a query whose true twin is the
// base analysis of its mechanism.
const (
	SetBase              = "base"
	SetNearDuplicate     = "near-duplicate"
	SetParaphrase        = "paraphrase"
	SetHardNegative      = "hard-negative"
	SetHardNegativeEarly = "hard-negative-early"
	SetParaphraseEarly   = "paraphrase-early"
)

// QuerySets are the query sets, in the order reports list them.
var QuerySets = []string{SetNearDuplicate, SetParaphrase, SetHardNegative, SetHardNegativeEarly, SetParaphraseEarly}

// Splits: the tune split is what the ranking and the engines were tuned on;
// the measure split is only ever measured.
const (
	SplitTune    = "tune"
	SplitMeasure = "measure"
)

// Node is one node of an analysis as the dataset writes it.
type Node struct {
	Kind string // WHY, ROOT_CAUSE, CONTRIBUTING_FACTOR, ESCAPE_POINT, EVIDENCE
	Text string
}

// Analysis is one analysis of the dataset with its labels.
type Analysis struct {
	Key     string
	Cluster string
	Split   string
	Domain  string
	Set     string
	// Mech is the key of the base analysis whose mechanism this one shares
	// (a base analysis's own key).
	Mech string
	// Decoy is, for a hard negative, the base analysis whose title, problem
	// statement and first WHY it reads like (and whose mechanism its evidence
	// rules out).
	Decoy   string
	Project string
	Title   string
	Problem string
	// Nodes are in the order they are added: WHYs form a chain, each under
	// the one before; root causes and contributing factors hang under the
	// last WHY; escape points and evidence stand at the top.
	Nodes   []Node
	Actions []string
}

// Record is a risk or task of a project, labelled with the mechanism it
// names (or "none"): look-across evidence.
type Record struct {
	Cluster string
	Split   string
	Project string
	Type    string // risk or task
	Mech    string
	Title   string
	Text    string
}

// Dataset is every analysis and record, the derived sets included.
type Dataset struct {
	Analyses []Analysis
	Records  []Record
}

// Load reads the dataset and derives its generated sets: a near-duplicate of
// each cluster's first base analysis (the same write-up with its numbers
// changed and its escape point left out), and the early form (title, problem
// and first WHY only: no evidence either) of each hard negative and
// paraphrase.
func Load() (Dataset, error) {
	var ds Dataset
	names, err := fs.Glob(files, "data/*.rca")
	if err != nil {
		return ds, err
	}
	sort.Strings(names)
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			return ds, err
		}
		if err := parse(name, string(raw), &ds); err != nil {
			return ds, err
		}
	}
	var derived []Analysis
	for _, a := range ds.Analyses {
		switch {
		case a.Set == SetBase && strings.HasSuffix(a.Key, "a"):
			derived = append(derived, nearDuplicate(a))
		case a.Set == SetHardNegative:
			derived = append(derived, early(a, SetHardNegativeEarly, "-e"))
		case a.Set == SetParaphrase:
			derived = append(derived, early(a, SetParaphraseEarly, "-pe"))
		}
	}
	ds.Analyses = append(ds.Analyses, derived...)
	return ds, ds.check()
}

// Only keeps the analyses and records of the clusters keep says yes to.
func (ds Dataset) Only(keep func(cluster, split, domain string) bool) Dataset {
	var out Dataset
	for _, a := range ds.Analyses {
		if keep(a.Cluster, a.Split, a.Domain) {
			out.Analyses = append(out.Analyses, a)
		}
	}
	domains := map[string]string{}
	for _, a := range ds.Analyses {
		domains[a.Cluster] = a.Domain
	}
	for _, r := range ds.Records {
		if keep(r.Cluster, r.Split, domains[r.Cluster]) {
			out.Records = append(out.Records, r)
		}
	}
	return out
}

// Worlds splits the dataset in two workspaces' worth, each with every base
// analysis and record: the full queries (near-duplicates, paraphrases, hard
// negatives) and the early ones. An early query beside its own full form
// would find it first and borrow its nodes as suggestions.
func (ds Dataset) Worlds() (full, early Dataset) {
	full.Records, early.Records = ds.Records, ds.Records
	for _, a := range ds.Analyses {
		switch a.Set {
		case SetBase:
			full.Analyses = append(full.Analyses, a)
			early.Analyses = append(early.Analyses, a)
		case SetHardNegativeEarly, SetParaphraseEarly:
			early.Analyses = append(early.Analyses, a)
		default:
			full.Analyses = append(full.Analyses, a)
		}
	}
	return full, early
}

// Analysis returns the analysis of key.
func (ds Dataset) Analysis(key string) (Analysis, bool) {
	for _, a := range ds.Analyses {
		if a.Key == key {
			return a, true
		}
	}
	return Analysis{}, false
}

func nearDuplicate(a Analysis) Analysis {
	bump := strings.NewReplacer("0", "1", "1", "2", "2", "3", "3", "4", "4", "5",
		"5", "6", "6", "7", "7", "8", "8", "9", "9", "0")
	n := a
	n.Key, n.Set, n.Actions = a.Key+"-n", SetNearDuplicate, nil
	n.Title, n.Problem = bump.Replace(a.Title), bump.Replace(a.Problem)
	n.Nodes = nil
	for _, node := range a.Nodes {
		if node.Kind != "ESCAPE_POINT" {
			n.Nodes = append(n.Nodes, Node{Kind: node.Kind, Text: bump.Replace(node.Text)})
		}
	}
	return n
}

func early(a Analysis, set, suffix string) Analysis {
	e := a
	e.Key, e.Set, e.Actions = a.Key+suffix, set, nil
	e.Nodes = nil
	for _, node := range a.Nodes {
		if node.Kind == "WHY" {
			e.Nodes = []Node{node}
			break
		}
	}
	return e
}

var nodeKinds = map[string]string{"why": "WHY", "root": "ROOT_CAUSE", "factor": "CONTRIBUTING_FACTOR",
	"escape": "ESCAPE_POINT", "cause": "CAUSE", "evidence": "EVIDENCE"}

// parse reads one file: "cluster ID split=S domain=D" opens a cluster,
// "analysis KEY set=S project=P [mech=M] [decoy=D]" and "record PROJECT
// TYPE mech=M" open an item, "field: text" lines fill it.
func parse(name, text string, ds *Dataset) error {
	var cluster, split, domain string
	var a *Analysis
	var r *Record
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fail := func(msg string) error { return fmt.Errorf("%s:%d: %s: %q", name, line, msg, l) }
		head, attrs := fields(l)
		switch head[0] {
		case "cluster":
			cluster, split, domain = head[1], attrs["split"], attrs["domain"]
			if split != SplitTune && split != SplitMeasure {
				return fail("split must be tune or measure")
			}
			a, r = nil, nil
			continue
		case "analysis":
			set := attrs["set"]
			if set == "hardneg" {
				set = SetHardNegative
			}
			ds.Analyses = append(ds.Analyses, Analysis{Key: head[1], Cluster: cluster, Split: split, Domain: domain,
				Set: set, Mech: attrs["mech"], Decoy: attrs["decoy"], Project: attrs["project"]})
			a, r = &ds.Analyses[len(ds.Analyses)-1], nil
			if a.Set == SetBase {
				a.Mech = a.Key
			}
			continue
		case "record":
			if len(head) < 3 {
				return fail("record needs a project and a type")
			}
			ds.Records = append(ds.Records, Record{Cluster: cluster, Split: split, Project: head[1], Type: head[2],
				Mech: attrs["mech"]})
			a, r = nil, &ds.Records[len(ds.Records)-1]
			continue
		}
		field, value, ok := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		if !ok || value == "" {
			return fail("want field: text")
		}
		switch {
		case r != nil && field == "title":
			r.Title = value
		case r != nil && field == "text":
			r.Text = value
		case a != nil && field == "title":
			a.Title = value
		case a != nil && field == "problem":
			a.Problem = value
		case a != nil && field == "action":
			a.Actions = append(a.Actions, value)
		case a != nil && nodeKinds[field] != "":
			a.Nodes = append(a.Nodes, Node{Kind: nodeKinds[field], Text: value})
		default:
			return fail("unknown field")
		}
	}
	return sc.Err()
}

// fields splits "word word key=value ..." into the words and the pairs.
func fields(l string) ([]string, map[string]string) {
	var head []string
	attrs := map[string]string{}
	for _, f := range strings.Fields(l) {
		if k, v, ok := strings.Cut(f, "="); ok {
			attrs[k] = v
		} else {
			head = append(head, f)
		}
	}
	if len(head) < 2 {
		head = append(head, "", "")
	}
	return head, attrs
}

// check refuses a dataset whose labels do not hold together.
func (ds Dataset) check() error {
	byKey := map[string]Analysis{}
	for _, a := range ds.Analyses {
		if _, dup := byKey[a.Key]; dup {
			return fmt.Errorf("analysis %s twice", a.Key)
		}
		byKey[a.Key] = a
	}
	for _, a := range ds.Analyses {
		if a.Title == "" || a.Problem == "" || a.Project == "" || a.Split == "" {
			return fmt.Errorf("analysis %s: title, problem, project and split are required", a.Key)
		}
		if m, ok := byKey[a.Mech]; !ok || m.Set != SetBase {
			return fmt.Errorf("analysis %s: mech %q is no base analysis", a.Key, a.Mech)
		}
		if a.Set == SetHardNegative {
			if d, ok := byKey[a.Decoy]; !ok || d.Set != SetBase || d.Mech == a.Mech {
				return fmt.Errorf("analysis %s: decoy %q must be a base analysis of another mechanism", a.Key, a.Decoy)
			}
		}
	}
	for _, r := range ds.Records {
		if r.Title == "" || (r.Type != "risk" && r.Type != "task") {
			return fmt.Errorf("record %q in %s: a title and type risk or task", r.Title, r.Project)
		}
		if _, ok := byKey[r.Mech]; !ok && r.Mech != "none" {
			return fmt.Errorf("record %q: mech %q is no analysis", r.Title, r.Mech)
		}
	}
	return nil
}
