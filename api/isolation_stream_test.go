package api_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// The stream generator: three workspaces, the vocabulary they write, what
// each owns, and the stages and random steps that drive the operations.

// isoWords is the shared vocabulary: every workspace describes the same
// failures, so anything ranking across workspaces would find matches.
var isoWords = []string{
	"hydraulic press seal leaks oil", "gland nut torque not checked at assembly", "conveyor motor bearing overheats",
	"feed water pump suction strainer clogs", "weld cracks at the bracket toe", "paint booth filter blocked",
}

// isoWS is one workspace of the run and what it owns that is still there.
type isoWS struct {
	i     int
	tn    *apitest.Tenant
	mark  string // a word only this workspace writes
	user2 string
	live  map[string][]string // kind -> ids
	// nodes of each analysis by kind, and its runs.
	nodes      map[string]map[string][]string
	runs5, rla map[string][]string
	approves   int // foreign user codes tried (five wrong ones lock the user out)
}

// isoRun is the whole run: the workspaces, who owns which id, and what each
// operation was driven to do.
type isoRun struct {
	t        *testing.T
	env      *apitest.Env
	rnd      *rand.Rand
	hook     string
	ws       []*isoWS
	owner    map[string]int
	stats    map[string]*isoStat
	cursors  map[string]map[int]string // list path -> workspace -> a nextCursor it got
	requests int
	n        int
}

func newIsoRun(t *testing.T, env *apitest.Env, rnd *rand.Rand, hook string) *isoRun {
	s := &isoRun{t: t, env: env, rnd: rnd, hook: hook, owner: map[string]int{}, stats: map[string]*isoStat{},
		cursors: map[string]map[int]string{}}
	for i := range 3 {
		tn := env.NewTenant(t)
		w := &isoWS{i: i, tn: tn, live: map[string][]string{}, nodes: map[string]map[string][]string{},
			runs5: map[string][]string{}, rla: map[string][]string{}}
		// Ten random letters, drawn again if they start like another
		// workspace's: search matches partial words.
		for w.mark == "" || slices.ContainsFunc(s.ws,
			func(o *isoWS) bool { return strings.Contains(o.mark, w.mark[:4]) }) {
			b := make([]byte, 10)
			for j := range b {
				b[j] = byte('a' + rnd.IntN(26))
			}
			w.mark = "zx" + string(b)
		}
		for _, id := range []string{tn.WorkspaceID, tn.UserID, tn.ConsoleID, tn.ClientID} {
			s.owner[id] = i
		}
		s.ws = append(s.ws, w)
	}
	return s
}

// driveable checks the server's operation list against the drivers and the
// skip list, both ways, and answers the driven operations in a stable order.
func (s *isoRun) driveable() []string {
	declared := map[string]bool{}
	var ops []string
	for _, o := range s.env.Server.Operations() {
		k := o.Method + " " + o.Path
		declared[k] = true
		_, driven := isoDrivers[k]
		_, skipped := isoSkipped[k]
		switch {
		case driven && skipped:
			s.t.Errorf("%s (%s) is both driven and skipped", k, o.ID)
		case driven:
			ops = append(ops, k)
		case !skipped:
			s.t.Errorf("operation %s (%s) has no driver: add one to isoDrivers, "+
				"or list it in isoSkipped with the reason it cannot leak", k, o.ID)
		}
	}
	for k := range isoDrivers {
		if !declared[k] {
			s.t.Errorf("isoDrivers has %s, which the server no longer declares", k)
		}
	}
	for k := range isoSkipped {
		if !declared[k] {
			s.t.Errorf("isoSkipped has %s, which the server no longer declares", k)
		}
	}
	slices.Sort(ops)
	if s.t.Failed() {
		s.t.FailNow()
	}
	return ops
}

func (s *isoRun) step(op string, foreign bool) {
	w := s.ws[s.rnd.IntN(len(s.ws))]
	x := s.ws[(w.i+1+s.rnd.IntN(len(s.ws)-1))%len(s.ws)]
	if _, ok := isoOwnOnly[op]; ok {
		foreign = false
	}
	isoDrivers[op](isoCtx{s: s, op: op, w: w, x: x, foreign: foreign})
}

// text is a sentence of the shared vocabulary with the workspace's word.
func (s *isoRun) text(w *isoWS) string { return s.textWith(w, isoWords[s.rnd.IntN(len(isoWords))]) }

func (s *isoRun) textWith(w *isoWS, words string) string {
	s.n++
	return fmt.Sprintf("%s %s %d", words, w.mark, s.n)
}

// pick is a random live id of kind, or "".
func (w *isoWS) pick(rnd *rand.Rand, kind string) string {
	ids := w.live[kind]
	if len(ids) == 0 {
		return ""
	}
	return ids[rnd.IntN(len(ids))]
}

func (w *isoWS) add(kind, id string) {
	if id != "" {
		w.live[kind] = append(w.live[kind], id)
	}
}

func (w *isoWS) drop(kind, id string) {
	w.live[kind] = slices.DeleteFunc(w.live[kind], func(v string) bool { return v == id })
}

func (w *isoWS) addNode(rrca, kind, id string) {
	if w.nodes[rrca] == nil {
		w.nodes[rrca] = map[string][]string{}
	}
	w.nodes[rrca][kind] = append(w.nodes[rrca][kind], id)
}

// pickNode is a random analysis of w with a node of kind ("" for any), and
// that node.
func (w *isoWS) pickNode(rnd *rand.Rand, kind string) (rrca, node string) {
	var pairs [][2]string
	for _, a := range w.live["rrca"] {
		for k, ids := range w.nodes[a] {
			if kind == "" || k == kind {
				for _, id := range ids {
					pairs = append(pairs, [2]string{a, id})
				}
			}
		}
	}
	if len(pairs) == 0 {
		return w.pick(rnd, "rrca"), ""
	}
	p := pairs[rnd.IntN(len(pairs))]
	return p[0], p[1]
}

// setup gives every workspace one of everything, in stages that interleave
// the workspaces, then waits for the background work (similarity, 5-why and
// look-across runs, fan-out) so that the random stream meets its results.
func (s *isoRun) setup() {
	for _, w := range s.ws {
		users := "/admin/v1/workspaces/" + w.tn.WorkspaceID + "/users"
		r := s.env.Do(s.t, apitest.Request{Method: "POST", Path: users, Header: s.env.Admin(),
			Body: map[string]any{"email": "second@" + w.mark + ".example.com", "name": "Second " + w.mark}})
		s.check(w, "create a second user", r)
		w.user2 = r.Str("id")
	}
	stages := []func(isoCtx){
		func(c isoCtx) { c.newSubscription(); c.newProject(); c.newProject() },
		func(c isoCtx) {
			c.newTask()
			c.newTask()
			c.newRisk()
			c.newRisk()
			c.newNote()
			c.newActionItem()
			c.newActionItem()
		},
		func(c isoCtx) {
			c.key("POST", isoR+"action-item/"+c.w.pick(c.s.rnd, "action-item")+"/log",
				map[string]any{"kind": "NOTE", "message": c.s.text(c.w)})
		},
		// Two analyses in the first project whose root cause is the
		// mechanism of a risk in the second: look-across proposes that
		// project for each, so there are suggestions to apply and reject.
		func(c isoCtx) {
			w, ps := c.w, c.w.live["project"]
			c.key("POST", isoR+"risk/create", map[string]any{"projectId": ps[1],
				"title": c.s.textWith(w, isoWords[1])})
			for range 2 {
				r := c.key("POST", isoRRCA, map[string]any{"title": c.s.text(w), "problemStatement": c.s.text(w),
					"projectId": ps[0]})
				a := r.Str("id")
				w.add("rrca", a)
				why := c.newNode(a, "WHY", "")
				root := c.key("POST", isoRRCA+"/"+a+"/nodes",
					map[string]any{"kind": "ROOT_CAUSE", "text": c.s.textWith(w, isoWords[1]),
						"parentId": why}).Str("id")
				w.addNode(a, "ROOT_CAUSE", root)
				c.newNode(a, "EVIDENCE", "")
			}
		},
		func(c isoCtx) { c.newCorrective() },
		func(c isoCtx) { c.newKey() },
		func(c isoCtx) { c.newDelivery() },
		func(c isoCtx) {
			for _, a := range c.w.live["rrca"] {
				c.w.runs5[a] = append(c.w.runs5[a], c.key("POST", isoRRCA+"/"+a+"/5why/suggest", nil).Str("id"))
				c.w.rla[a] = append(c.w.rla[a], c.key("POST", isoRRCA+"/"+a+"/look-across/suggest", nil).Str("id"))
			}
		},
	}
	for _, stage := range stages {
		for _, i := range s.rnd.Perm(len(s.ws)) {
			stage(isoCtx{s: s, op: "setup", w: s.ws[i], x: s.ws[(i+1)%len(s.ws)]})
		}
	}
	for _, w := range s.ws {
		c := isoCtx{s: s, op: "setup", w: w, x: w}
		for a, runs := range w.runs5 {
			for _, run := range runs {
				apitest.Eventually(s.t, apitest.JobWait, "5-why run", func() bool {
					r := c.get(isoRRCA+"/"+a+"/5why/suggestions/"+run, nil)
					for _, n := range r.Data()["nodes"].([]any) {
						w.addNode(a, "WHY_SUGGESTION", n.(map[string]any)["id"].(string))
					}
					return r.Str("status") != "PENDING"
				})
			}
		}
		for a, runs := range w.rla {
			for _, run := range runs {
				apitest.Eventually(s.t, apitest.JobWait, "look-across run", func() bool {
					return c.get(isoRRCA+"/"+a+"/look-across/runs/"+run, nil).Str("status") != "PENDING"
				})
			}
			for _, it := range c.get(isoRRCA+"/"+a+"/look-across", nil).Items() {
				w.add("suggestion", a+"/"+it["id"].(string))
				w.add("proposed", a+"/"+it["id"].(string))
			}
		}
		apitest.Eventually(s.t, apitest.JobWait, "deliveries", func() bool {
			for _, id := range c.get("/openapi/v1/webhooks/deliveries", map[string]string{"limit": "200"}).IDs() {
				if !slices.Contains(w.live["delivery"], id) {
					w.add("delivery", id)
				}
			}
			return len(w.live["delivery"]) > 3
		})
	}
}

// finalSweep asks every workspace for every other workspace's word through
// search and the text filters, once the stream has written everything.
func (s *isoRun) finalSweep() {
	for _, w := range s.ws {
		for _, x := range s.ws {
			if x == w {
				continue
			}
			c := isoCtx{s: s, op: "final sweep", w: w, x: x}
			c.get(isoR+"search", map[string]string{"q": x.mark}, x.mark)
			for _, path := range []string{"task/list", "risk/list", "note/list", "action-item/list", "project/list"} {
				q := map[string]string{"q": x.mark}
				if path != "note/list" {
					q["includeArchived"] = "true"
				}
				if r := c.get(isoR+path, q, x.mark); r.Status != 200 || len(r.Items()) > 0 {
					s.t.Errorf("workspace %d's %s for workspace %d's word: %d %s", w.i, path, x.i, r.Status, r.Raw)
				}
			}
		}
	}
}
