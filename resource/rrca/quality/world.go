package quality

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// API is one tenant's access to pmapi: Call sends a request with the tenant's
// key and answers the envelope's data, or an error for anything but a 2xx
// answer. A path may carry a query.
type API interface {
	Call(ctx context.Context, method, path string, body any) (map[string]any, error)
}

// The routes the benchmark uses.
const (
	rrcaBase    = "/openapi/v1/resource/rrca"
	projectPath = "/openapi/v1/resource/project/create"
	riskPath    = "/openapi/v1/resource/risk/create"
	taskPath    = "/openapi/v1/resource/task/create"
)

// source is where a text of the workspace came from: a node of an analysis
// (its key, its kind and, for a WHY, its place in the chain) or a record.
type source struct {
	Key      string // analysis key; "" for a record
	Kind     string
	WhyIndex int // 0 for the first WHY; -1 for other kinds
	Mech     string
	Project  string
}

// World is a dataset loaded into one workspace through the API.
type World struct {
	DS  Dataset
	api API
	// Parallel is how many analyses are written at once (default 4).
	Parallel int

	mu       sync.Mutex
	projects map[string]string // project key -> id
	keyOf    map[string]string // project id -> key
	ids      map[string]string // analysis key -> id
	texts    map[string][]source
}

// NewWorld is ds about to be loaded through api.
func NewWorld(api API, ds Dataset) *World {
	return &World{DS: ds, api: api, projects: map[string]string{}, keyOf: map[string]string{}, ids: map[string]string{},
		texts: map[string][]source{}}
}

// ID is the API id of the analysis key.
func (w *World) ID(key string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ids[key]
}

func normal(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

func (w *World) remember(text string, s source) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := normal(text)
	w.texts[k] = append(w.texts[k], s)
}

// Load creates the projects, the records and every analysis with its nodes
// and, for base analyses, its corrective actions; base analyses first, as a
// workspace holds its closed analyses before new ones are written.
func (w *World) Load(ctx context.Context) error {
	for _, a := range w.DS.Analyses {
		if err := w.project(ctx, a.Project); err != nil {
			return err
		}
	}
	for _, r := range w.DS.Records {
		if err := w.project(ctx, r.Project); err != nil {
			return err
		}
		body := map[string]any{"projectId": w.projects[r.Project], "title": r.Title, "description": r.Text}
		path := taskPath
		if r.Type == "risk" {
			path = riskPath
		}
		if _, err := w.api.Call(ctx, "POST", path, body); err != nil {
			return err
		}
		w.remember(r.Title, source{Kind: r.Type, WhyIndex: -1, Mech: r.Mech, Project: r.Project})
	}
	var bases, queries []Analysis
	for _, a := range w.DS.Analyses {
		if a.Set == SetBase {
			bases = append(bases, a)
		} else {
			queries = append(queries, a)
		}
	}
	for _, group := range [][]Analysis{bases, queries} {
		if err := w.parallel(ctx, group, w.write); err != nil {
			return err
		}
	}
	return nil
}

// collect runs do on every analysis of as as parallel does and answers
// what each made, by the analysis's key.
func collect[T any](ctx context.Context, w *World, as []Analysis,
	do func(context.Context, Analysis) (T, error)) (map[string]T, error) {
	out := make(map[string]T, len(as))
	var mu sync.Mutex
	err := w.parallel(ctx, as, func(ctx context.Context, a Analysis) error {
		v, err := do(ctx, a)
		mu.Lock()
		out[a.Key] = v
		mu.Unlock()
		return err
	})
	return out, err
}

// parallel runs do for every analysis, Parallel at a time, and answers the
// first error.
func (w *World) parallel(ctx context.Context, as []Analysis, do func(context.Context, Analysis) error) error {
	n := w.Parallel
	if n <= 0 {
		n = 4
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan Analysis)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for a := range work {
				if err := do(ctx, a); err != nil {
					errs <- fmt.Errorf("%s: %w", a.Key, err)
					cancel()
					return
				}
			}
		})
	}
	for _, a := range as {
		select {
		case work <- a:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

func (w *World) project(ctx context.Context, key string) error {
	w.mu.Lock()
	_, ok := w.projects[key]
	w.mu.Unlock()
	if ok {
		return nil
	}
	p, err := w.api.Call(ctx, "POST", projectPath, map[string]any{"name": key})
	if err != nil {
		return err
	}
	id, _ := p["id"].(string)
	w.mu.Lock()
	w.projects[key], w.keyOf[id] = id, key
	w.mu.Unlock()
	return nil
}

// write creates one analysis: WHYs chained, root causes and contributing
// factors under the last WHY, escape points and evidence at the top, and a
// corrective action from the first root cause for each action.
func (w *World) write(ctx context.Context, a Analysis) error {
	an, err := w.api.Call(ctx, "POST", rrcaBase, map[string]any{"title": a.Title, "problemStatement": a.Problem,
		"projectId": w.projects[a.Project]})
	if err != nil {
		return err
	}
	id, _ := an["id"].(string)
	w.mu.Lock()
	w.ids[a.Key] = id
	w.mu.Unlock()
	var lastWhy, root string
	whys := 0
	for _, n := range a.Nodes {
		body := map[string]any{"kind": n.Kind, "text": n.Text}
		parent := lastWhy
		if n.Kind == "ESCAPE_POINT" || n.Kind == "EVIDENCE" {
			parent = ""
		}
		if parent != "" {
			body["parentId"] = parent
		}
		node, err := w.api.Call(ctx, "POST", rrcaBase+"/"+id+"/nodes", body)
		if err != nil {
			return err
		}
		nid, _ := node["id"].(string)
		s := source{Key: a.Key, Kind: n.Kind, WhyIndex: -1, Mech: a.Mech, Project: a.Project}
		switch n.Kind {
		case "WHY":
			s.WhyIndex = whys
			whys++
			lastWhy = nid
		case "ROOT_CAUSE":
			if root == "" {
				root = nid
			}
		}
		w.remember(n.Text, s)
	}
	for _, act := range a.Actions {
		if root == "" {
			return fmt.Errorf("an action needs a root cause")
		}
		if _, err := w.api.Call(ctx, "POST", rrcaBase+"/"+id+"/corrective-actions",
			map[string]any{"nodeId": root, "title": act}); err != nil {
			return err
		}
	}
	return nil
}

// WaitComputed polls every analysis's similar list until none is pending.
func (w *World) WaitComputed(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, a := range w.DS.Analyses {
		for {
			s, err := w.api.Call(ctx, "GET", rrcaBase+"/"+w.ID(a.Key)+"/similar?limit=1", nil)
			if err != nil {
				return err
			}
			if s["pending"] == false {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: similar analyses still pending after %v", a.Key, within)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// similar is an analysis's similar list: the ids best first.
func (w *World) similar(ctx context.Context, key string) ([]string, error) {
	s, err := w.api.Call(ctx, "GET", rrcaBase+"/"+w.ID(key)+"/similar?"+url.Values{"limit": {"200"}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	items, _ := s["items"].([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["rrcaId"].(string)
		out = append(out, id)
	}
	return out, nil
}

// run starts a suggestion run of kind ("5why" or "look-across") and waits
// for it to end; it answers the run.
func (w *World) run(ctx context.Context, key, kind string) (map[string]any, error) {
	id := w.ID(key)
	r, err := w.api.Call(ctx, "POST", rrcaBase+"/"+id+"/"+kind+"/suggest", nil)
	if err != nil {
		return nil, err
	}
	path := rrcaBase + "/" + id + "/5why/suggestions/" + r["id"].(string)
	if kind == "look-across" {
		path = rrcaBase + "/" + id + "/look-across/runs/" + r["id"].(string)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err = w.api.Call(ctx, "GET", path, nil)
		if err != nil {
			return nil, err
		}
		switch r["status"] {
		case "READY":
			return r, nil
		case "FAILED":
			return nil, fmt.Errorf("%s run of %s failed: %v", kind, key, r["error"])
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s run of %s not done in 2m", kind, key)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
