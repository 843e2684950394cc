package rrca_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/storetest"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/registry"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/tenant"
)

func TestMain(m *testing.M) { apitest.Main(m) }

// noJobs queues nothing: these tests work runs by calling the store.
type noJobs struct{}

func (noJobs) Similarity(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error {
	return nil
}
func (noJobs) Suggest(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error { return nil }

// heard is an engine that keeps what a run hands it and suggests nothing.
type heard struct {
	why    suggest.WhyInput
	across suggest.LookAcrossInput
}

func (h *heard) FiveWhy(_ context.Context, in suggest.WhyInput) ([]suggest.Why, error) {
	h.why = in
	return nil, nil
}

func (h *heard) LookAcross(_ context.Context, in suggest.LookAcrossInput) ([]suggest.Suggestion, error) {
	h.across = in
	return nil, nil
}

// world is a workspace whose analyses read the registry's sources.
type world struct {
	t     *testing.T
	f     storetest.Fixture
	store rrca.Store
}

func newWorld(t *testing.T, name string) world {
	f := storetest.New(t, name)
	items := actionitem.Store{Events: event.Discard{}}
	return world{
		t:     t,
		f:     f,
		store: rrca.Store{Events: event.Discard{}, Jobs: noJobs{}, ActionItems: items, Sources: registry.RRCASources()},
	}
}

func (w world) project(name string) uuid.UUID {
	p, err := project.Store{
		Events: event.Discard{},
	}.Create(
		context.Background(),
		w.f.Shard,
		w.f.WS,
		project.NewProject{Settings: project.Settings{Name: name, RAGStatus: project.Green}},
	)
	if err != nil {
		w.t.Fatal(err)
	}
	return p.ID
}

func (w world) task(p uuid.UUID, title string) uuid.UUID {
	it, err := task.Store{
		Events: event.Discard{},
	}.Create(
		context.Background(),
		w.f.Shard,
		w.f.WS,
		task.NewTask{ProjectID: p, Title: title, Priority: 3},
	)
	if err != nil {
		w.t.Fatal(err)
	}
	return it.ID
}

func (w world) risk(p uuid.UUID, title string) uuid.UUID {
	r, err := risk.Store{
		Events: event.Discard{},
	}.Create(
		context.Background(),
		w.f.Shard,
		w.f.WS,
		risk.NewRisk{ProjectID: p, Title: title, Severity: "HIGH"},
	)
	if err != nil {
		w.t.Fatal(err)
	}
	return r.ID
}

func (w world) analysis(p uuid.UUID, title string) uuid.UUID {
	a, err := w.store.Create(
		context.Background(),
		w.f.Shard,
		w.f.WS,
		rrca.NewAnalysis{Title: title, ProblemStatement: &title, ProjectID: &p},
	)
	if err != nil {
		w.t.Fatal(err)
	}
	return a.ID
}

func (w world) node(a uuid.UUID, kind, text string) uuid.UUID {
	n, err := w.store.AddNode(context.Background(), w.f.Shard, w.f.WS, a, kind, text, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return n.ID
}

// work queues a run of kind and works it with an engine that keeps its input.
func (w world) work(a uuid.UUID, kind string) *heard {
	ctx := context.Background()
	run, err := w.store.CreateRun(ctx, w.f.Shard, w.f.WS, a, kind)
	if err != nil {
		w.t.Fatal(err)
	}
	h := &heard{}
	if kind == rrca.RunFiveWhy {
		err = w.store.RunFiveWhy(ctx, w.f.Shard, w.f.WS, run, h)
	} else {
		err = w.store.RunLookAcross(ctx, w.f.Shard, w.f.WS, run, h)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// TestFiveWhyCandidatesAreTheSourcesLiveRows: a 5-why run ranks the live
// risks and tasks of its own workspace, each with its type, API id and
// title; the tasks are read through their Docs table (task_search), as
// search reads them.
func TestFiveWhyCandidatesAreTheSourcesLiveRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "five-why sources")
	p := w.project("Boiler house")
	tsk := w.task(p, "Replace the clogged suction strainer of the feed water pump")
	rsk := w.risk(p, "Feed water pump suction strainer clogs with scale")
	gone := w.task(p, "Flush the feed water pump strainer housing")
	if _, err := (task.Store{Events: event.Discard{}}).SetArchived(ctx, w.f.Shard, w.f.WS, gone, true); err != nil {
		t.Fatal(err)
	}
	other := newWorld(t, "five-why elsewhere")
	foreign := other.task(other.project("Elsewhere"), "Clean the feed water pump suction strainer")
	a := w.analysis(p, "Feed water pump cavitates: suction strainer clogged")
	w.node(a, rrca.KindWhy, "Suction pressure drops at the feed water pump")

	got := map[string]suggest.Candidate{}
	for _, c := range w.work(a, rrca.RunFiveWhy).why.Candidates {
		got[c.ID] = c
	}
	want := map[string]suggest.Candidate{
		pmapi.FormatID(task.IDPrefix, tsk): {
			Type:  "task",
			Title: "Replace the clogged suction strainer of the feed water pump",
		},
		pmapi.FormatID(risk.IDPrefix, rsk): {Type: "risk", Title: "Feed water pump suction strainer clogs with scale"},
	}
	for id, c := range want {
		if g, ok := got[id]; !ok || g.Type != c.Type || g.Title != c.Title || g.Score <= 0 {
			t.Errorf("candidate %s: got %+v, want %s %q with a score", id, g, c.Type, c.Title)
		}
	}
	for _, id := range []string{pmapi.FormatID(task.IDPrefix, gone), pmapi.FormatID(task.IDPrefix, foreign)} {
		if _, ok := got[id]; ok {
			t.Errorf("candidate %s is archived or another workspace's: %v", id, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("candidates %v, want exactly %v", got, want)
	}
}

// TestLookAcrossReadsProjectsAndItemsThroughTheirSources: look-across groups
// the other live projects' rows under each project's name (and the analyses
// there whose computed mechanism shares a term), and carries the corrective
// actions' titles as their action items have them now; an analysis's
// corrective actions show their items' status.
func TestLookAcrossReadsProjectsAndItemsThroughTheirSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "look-across sources")
	home, same, shelved := w.project("Line 4"), w.project("Line 7"), w.project("Old line")
	rsk := w.risk(same, "Gland nut torque not checked on hydraulic cylinders")
	tsk := w.task(same, "Torque check of the gland nut on the press cylinder")
	twin := w.analysis(same, "Gland nut loose on the line 7 cylinder")
	w.node(twin, rrca.KindRootCause, "The gland nut torque was not checked at assembly")
	if err := w.store.RecomputeSimilar(ctx, w.f.Shard, w.f.WS, twin, nil); err != nil {
		t.Fatal(err)
	}
	w.risk(shelved, "Gland nut torque not checked on old cylinders")
	if _, err := (project.Store{Events: event.Discard{}}).SetArchived(ctx, w.f.Shard, w.f.WS, shelved, true); err != nil {
		t.Fatal(err)
	}
	a := w.analysis(home, "Press cylinder leak")
	root := w.node(a, rrca.KindRootCause, "No torque check of the gland nut on hydraulic cylinders")
	ca, item, err := w.store.AddCorrective(
		ctx,
		w.f.Shard,
		w.f.WS,
		a,
		root,
		actionitem.NewItem{Title: "Add a torque check"},
	)
	if err != nil {
		t.Fatal(err)
	}
	renamed, started := "Add a gland nut torque check to the assembly checklist", actionitem.InProgress
	if err := w.f.Shard.Tx(ctx, w.f.WS, func(tx pgx.Tx) error {
		items := actionitem.Store{Events: event.Discard{}}
		change := actionitem.Fields{Title: &renamed, Status: &started}
		_, err := items.UpdateTx(ctx, tx, w.f.Shard, w.f.WS, item.ID, change, "test")
		return err
	}); err != nil {
		t.Fatal(err)
	}

	in := w.work(a, rrca.RunLookAcross).across
	if !slices.Equal(in.Actions, []string{renamed}) {
		t.Errorf("actions %q, want the item's title now, %q", in.Actions, renamed)
	}
	if len(in.Projects) != 1 || in.Projects[0].ProjectID != same.String() || in.Projects[0].Name != "Line 7" {
		t.Fatalf("projects %+v, want Line 7 alone (not the home or the archived one)", in.Projects)
	}
	var ids []string
	for _, c := range in.Projects[0].Items {
		ids = append(ids, c.Type+" "+c.ID)
	}
	slices.Sort(ids)
	want := []string{
		"risk " + pmapi.FormatID(risk.IDPrefix, rsk),
		"rrca " + pmapi.FormatID(rrca.IDPrefix, twin),
		"task " + pmapi.FormatID(task.IDPrefix, tsk),
	}
	if !slices.Equal(ids, want) {
		t.Errorf("Line 7's rows %v, want %v", ids, want)
	}

	cas, err := w.store.Correctives(ctx, w.f.Shard, w.f.WS, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(cas) != 1 || cas[0].ID != ca.ID || cas[0].ItemStatus == nil || *cas[0].ItemStatus != started {
		t.Errorf("corrective actions %+v, want %s with its item IN_PROGRESS", cas, ca.ID)
	}
}

// TestAStoreWithoutSourcesRefuses: a store built without its sources says
// what it lacks instead of running a statement that names no table.
func TestAStoreWithoutSourcesRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "no sources")
	a := w.analysis(w.project("P"), "A leak")
	w.store.Sources = rrca.Sources{}
	run, err := w.store.CreateRun(ctx, w.f.Shard, w.f.WS, a, rrca.RunFiveWhy)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.store.RunFiveWhy(ctx, w.f.Shard, w.f.WS, run, &heard{}); err == nil ||
		!strings.Contains(err.Error(), "Sources") {
		t.Errorf("5-why without sources: %v", err)
	}
	if _, err := w.store.Detail(ctx, w.f.Shard, w.f.WS, a); err == nil || !strings.Contains(err.Error(), "Sources") {
		t.Errorf("detail without sources: %v", err)
	}
}
