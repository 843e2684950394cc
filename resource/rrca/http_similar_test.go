package rrca_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// corpus is committed test data: 30 analyses over 5 projects, in 15 planted
// pairs of near-duplicates (the same incident written up twice in other words).
type corpus struct {
	Projects []string `json:"projects"`
	Analyses []struct {
		Key     string   `json:"key"`
		Twin    string   `json:"twin"`
		Project string   `json:"project"`
		Title   string   `json:"title"`
		Problem string   `json:"problem"`
		Nodes   []string `json:"nodes"`
	} `json:"analyses"`
}

// TestSimilarFindsPlantedNearDuplicates loads the corpus through the API, lets
// the similarity jobs run, and counts how often an analysis's planted twin is
// its first similar analysis. The bar is 90%.
func TestSimilarFindsPlantedNearDuplicates(t *testing.T) {
	raw, err := os.ReadFile("testdata/rrca_corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	projects := map[string]string{}
	for _, p := range c.Projects {
		projects[p] = tn.CreateProject(t, map[string]any{"name": "Plant " + p})["id"].(string)
	}
	ids := map[string]string{}
	for _, a := range c.Analyses {
		id := tn.CreateRRCA(t, map[string]any{"title": a.Title, "problemStatement": a.Problem,
			"projectId": projects[a.Project]})
		ids[a.Key] = id
		parent := ""
		for i, text := range a.Nodes {
			kind := "WHY"
			if i == len(a.Nodes)-1 {
				kind = "ROOT_CAUSE"
			}
			parent = tn.AddNode(t, id, kind, text, parent)
		}
	}
	hits := 0
	for _, a := range c.Analyses {
		var top string
		apitest.Eventually(t, apitest.JobWait, "similar of "+a.Key, func() bool {
			r := tn.Get(t, apitest.RRCABase+"/"+ids[a.Key]+"/similar", map[string]string{"limit": "3"})
			if r.Data()["pending"] == true || len(r.Items()) == 0 {
				return false
			}
			top = r.Items()[0]["rrcaId"].(string)
			return true
		})
		if top == ids[a.Twin] {
			hits++
		} else {
			t.Logf("%s (%q): top similar is not its twin", a.Key, a.Title)
		}
	}
	rate := float64(hits) / float64(len(c.Analyses))
	t.Logf("planted near-duplicate ranked first for %d of %d analyses (%.0f%%)", hits, len(c.Analyses), rate*100)
	if rate < 0.9 {
		t.Fatalf("near-duplicate first in %.0f%% of cases, want at least 90%%", rate*100)
	}
}

// TestSimilarTellsComputedEmptyFromNever: an analysis alone in its workspace
// has nothing similar; once its similarity job ran, computedAt says when, so
// an empty list reads "computed, none", and before it, null says "never".
// Not parallel: its workers would run the other tests' jobs (and empty their
// outbox) while they count events.
func TestSimilarTellsComputedEmptyFromNever(t *testing.T) {
	// The shared app runs no workers: there the job never runs.
	idle := apitest.NewTenant(t)
	never := idle.Get(t, apitest.RRCABase+"/"+idle.CreateRRCA(t,
		map[string]any{"title": "Alone", "problemStatement": "Nothing like it"})+"/similar", nil)
	if never.Data()["computedAt"] != nil || never.Data()["pending"] != true {
		t.Fatalf("never computed: %s", never.Raw)
	}
	env := apitest.New(t)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	id := tn.CreateRRCA(t, map[string]any{"title": "Alone", "problemStatement": "Nothing like it"})
	var last *apitest.Response
	apitest.Eventually(t, apitest.JobWait, "the similarity job", func() bool {
		last = tn.Get(t, apitest.RRCABase+"/"+id+"/similar", nil)
		return last.Data()["pending"] == false
	})
	if len(last.Items()) != 0 || last.Data()["computedAt"] == nil {
		t.Fatalf("computed, nothing similar: %s", last.Raw)
	}
}
