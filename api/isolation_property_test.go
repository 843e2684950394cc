package api_test

import (
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/webhook"
)

// TestIsolationProperty drives randomized, interleaved request streams of
// three workspaces over every operation the server declares, black box over
// HTTP: each workspace writes texts from one shared vocabulary (so similarity,
// look-across, suggestions and search would find the others' records if they
// could) plus a word of its own; it uses the ids of the other workspaces with
// its own credentials in paths, bodies and list filters, and searches for the
// other workspaces' words. No answer may carry another workspace's id or word,
// a foreign id is 404 NOT_FOUND (or what the contract says for that place),
// and nothing is a 5xx. An operation the generator cannot drive fails the test
// unless isoSkipped names it with a reason.
//
// PMAPI_ISOLATION_SEED=<n> replays a run; the seed is printed on failure.
func TestIsolationProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PMAPI_ISOLATION_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PMAPI_ISOLATION_SEED: %v", err)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: PMAPI_ISOLATION_SEED=%d replays this run", seed, seed)
		}
	})
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	caFile := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(caFile, certPEM(rcv), 0o600); err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.NewSender(true, caFile)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.New(t, func(d *apitest.Config) {
		d.WebhookAllowLoopback = true
		d.WebhookSender = sender
		// The stream outruns a key's 600 a minute; 429s would test nothing.
		d.RateLimitPerMinute = 1_000_000_000
	})
	env.StartWorkers(t, func(o *jobs.Options) {
		o.Schedule = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}
		o.PollInterval = 50 * time.Millisecond
	})
	s := newIsoRun(t, env, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rcv.URL)
	ops := s.driveable()
	start := time.Now()
	s.setup()
	// Every operation once in each mode, then a random stream.
	for _, foreign := range []bool{false, true} {
		for _, i := range s.rnd.Perm(len(ops)) {
			s.step(ops[i], foreign)
		}
	}
	for range isoSteps {
		s.step(ops[s.rnd.IntN(len(ops))], s.rnd.IntN(2) == 0)
	}
	s.finalSweep()
	s.coverage(ops)
	t.Logf("%d requests over %d operations, 3 workspaces, %d random steps, %v", s.requests, len(ops), isoSteps, time.Since(start).Round(time.Millisecond))
}

// isoSteps bounds the random stream: the whole test stays well under 20 s.
const isoSteps = 1500

// isoSkipped are the operations the generator does not drive, each with why.
var isoSkipped = map[string]string{
	"GET /openapi/v1/openapi.json":                                      "public document, no workspace data",
	"GET /healthz":                                                      "process health, no workspace data",
	"GET /readyz":                                                       "database readiness, no workspace data",
	"GET /docs":                                                         "static reference page, no workspace data",
	"GET /docs/{file}":                                                  "static scripts of the reference page, no workspace data",
	"GET /openapi/v1/webhooks/event-types":                              "public list of event types, no workspace data",
	"POST /admin/v1/workspaces":                                         "operator token: spans every workspace by design",
	"GET /admin/v1/workspaces":                                          "operator token: spans every workspace by design",
	"GET /admin/v1/workspaces/{workspaceId}":                            "operator token: spans every workspace by design",
	"POST /admin/v1/workspaces/{workspaceId}/suspend":                   "operator token: spans every workspace by design",
	"POST /admin/v1/workspaces/{workspaceId}/resume":                    "operator token: spans every workspace by design",
	"PUT /admin/v1/workspaces/{workspaceId}/shard":                      "operator token: spans every workspace by design",
	"POST /admin/v1/workspaces/{workspaceId}/users":                     "operator token: spans every workspace by design (used in set-up)",
	"POST /admin/v1/workspaces/{workspaceId}/users/{userId}/sessions":   "operator token: spans every workspace by design",
	"PUT /admin/v1/workspaces/{workspaceId}/apps/{clientId}/rate-limit": "operator token: spans every workspace by design",
	"GET /admin/v1/workspaces/{workspaceId}/placement":                  "operator token, Citus placement",
	"POST /admin/v1/workspaces/{workspaceId}/isolate":                   "operator token, Citus placement",
	"POST /admin/v1/workspaces/{workspaceId}/move":                      "operator token, Citus placement",
	"POST /openapi/v1/oauth/device/code":                                "public RFC 8628 endpoint keyed by client id (used to drive oauthApprove)",
	"POST /openapi/v1/oauth/token":                                      "RFC 6749 token endpoint: codes, not workspace ids; TestOAuthTenantIsolation",
	"POST /openapi/v1/oauth/refresh":                                    "RFC 6749 refresh: tokens, not workspace ids; TestOAuthTenantIsolation",
	"POST /openapi/v1/oauth/revoke":                                     "RFC 7009: tokens, not workspace ids",
	"POST /openapi/v1/oauth/introspect":                                 "RFC 7662: tokens, not workspace ids",
	"GET /openapi/v1/oauth/jwks.json":                                   "public signing keys",
	"GET /.well-known/oauth-authorization-server":                       "public metadata",
	"GET /openapi/v1/oauth/device":                                      "HTML page; its approval is oauthApprove, driven here",
	"POST /openapi/v1/oauth/device":                                     "HTML form; its approval is oauthApprove, driven here",
}

// isoOwnOnly are driven operations that take no id another workspace could
// own, so they have no foreign mode.
var isoOwnOnly = map[string]string{
	"GET /openapi/v1/session": "the session's own workspace",
	"GET /openapi/v1/me":      "the credential's own workspace",
	"GET /openapi/v1/apps":    "the session's own apps",
}

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

type isoStat struct{ own, ownOK, foreign int }

var isoIDs = regexp.MustCompile(`\b(?:prj|tsk|rsk|act|log|rca|nod|cac|lac|not|whk|evt|key|run)_[0-9A-Za-z]{26}\b|\bpm_cli_[0-9A-Za-z]{20}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)

func newIsoRun(t *testing.T, env *apitest.Env, rnd *rand.Rand, hook string) *isoRun {
	s := &isoRun{t: t, env: env, rnd: rnd, hook: hook, owner: map[string]int{}, stats: map[string]*isoStat{}, cursors: map[string]map[int]string{}}
	for i := range 3 {
		tn := env.NewTenant(t)
		w := &isoWS{i: i, tn: tn, live: map[string][]string{}, nodes: map[string]map[string][]string{}, runs5: map[string][]string{}, rla: map[string][]string{}}
		// Ten random letters, drawn again if they start like another
		// workspace's: search matches partial words.
		for w.mark == "" || slices.ContainsFunc(s.ws, func(o *isoWS) bool { return strings.Contains(o.mark, w.mark[:4]) }) {
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
			s.t.Errorf("operation %s (%s) has no driver: add one to isoDrivers, or list it in isoSkipped with the reason it cannot leak", k, o.ID)
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

// check holds one answer to the property. sent lists what the request itself
// carried from another workspace: an answer may echo it (a 404 naming the id
// asked for) without having leaked it.
func (s *isoRun) check(w *isoWS, what string, r *apitest.Response, sent ...string) {
	s.t.Helper()
	s.requests++
	if r.Status >= 500 {
		s.t.Errorf("%s as workspace %d: %d %s", what, w.i, r.Status, r.Raw)
	}
	body := string(r.Raw)
	for _, v := range sent {
		if v != "" {
			body = strings.ReplaceAll(body, v, "")
		}
	}
	for _, id := range isoIDs.FindAllString(body, -1) {
		if o, ok := s.owner[id]; !ok {
			s.owner[id] = w.i
		} else if o != w.i {
			s.t.Errorf("LEAK: %s as workspace %d answered %s of workspace %d: %s", what, w.i, id, o, r.Raw)
		}
	}
	for _, x := range s.ws {
		if x != w && strings.Contains(body, x.mark) {
			s.t.Errorf("LEAK: %s as workspace %d answered workspace %d's text: %s", what, w.i, x.i, r.Raw)
		}
	}
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

// isoCtx is one driver call: the operation, the acting workspace w, the
// workspace x whose ids a foreign call uses, and which mode this call is in.
type isoCtx struct {
	s       *isoRun
	op      string
	w, x    *isoWS
	foreign bool
}

func (c isoCtx) stat() *isoStat {
	st := c.s.stats[c.op]
	if st == nil {
		st = &isoStat{}
		c.s.stats[c.op] = st
	}
	return st
}

// key calls a resource route with w's API key.
func (c isoCtx) key(method, path string, body any, sent ...string) *apitest.Response {
	c.s.t.Helper()
	r := c.w.tn.Do(c.s.t, method, path, body)
	c.s.check(c.w, method+" "+path, r, sent...)
	return r
}

// get calls a resource route with w's API key and query parameters; a list
// that pages remembers its cursor, which another workspace then tries.
func (c isoCtx) get(path string, q map[string]string, sent ...string) *apitest.Response {
	c.s.t.Helper()
	r := c.w.tn.Get(c.s.t, path, q)
	c.s.check(c.w, "GET "+path+"?"+query(q), r, sent...)
	if cur, _ := r.Data()["nextCursor"].(string); cur != "" {
		if c.s.cursors[path] == nil {
			c.s.cursors[path] = map[int]string{}
		}
		c.s.cursors[path][c.w.i] = cur
	}
	return r
}

func query(q map[string]string) string {
	v := url.Values{}
	for k, s := range q {
		v.Set(k, s)
	}
	return v.Encode()
}

// console calls a console route with w's session.
func (c isoCtx) console(method, path string, body any, sent ...string) *apitest.Response {
	c.s.t.Helper()
	r := c.w.tn.Console(c.s.t, method, path, body)
	c.s.check(c.w, method+" "+path+" (console)", r, sent...)
	return r
}

// own records an own-mode call and answers whether it succeeded.
func (c isoCtx) own(r *apitest.Response) bool {
	st := c.stat()
	st.own++
	if r.Status >= 200 && r.Status < 300 {
		st.ownOK++
		return true
	}
	return false
}

// refused records a foreign-mode call that must be answered status and code.
func (c isoCtx) refused(r *apitest.Response, status int, code string) {
	c.s.t.Helper()
	c.stat().foreign++
	if r.Status != status || r.ErrorCode() != code {
		c.s.t.Errorf("%s as workspace %d with workspace %d's ids: %d %s, want %d %s: %s", c.op, c.w.i, c.x.i, r.Status, r.ErrorCode(), status, code, r.Raw)
	}
}

func (c isoCtx) notFound(r *apitest.Response) { c.s.t.Helper(); c.refused(r, 404, "NOT_FOUND") }

// empty records a foreign-mode list call: a filter naming another
// workspace's id or word matches nothing.
func (c isoCtx) empty(r *apitest.Response) {
	c.s.t.Helper()
	c.stat().foreign++
	if r.Status != 200 || len(r.Items()) != 0 {
		c.s.t.Errorf("%s as workspace %d filtered by workspace %d's id or word: %d %s", c.op, c.w.i, c.x.i, r.Status, r.Raw)
	}
}

// likeAbsent records a foreign-mode call that the contract refuses with a 4xx
// other than 404 (a reference that is not one of this analysis, say): the
// answer must be the one a made-up id of the same type gets, so it tells
// nothing about the other workspace's row.
func (c isoCtx) likeAbsent(r, absent *apitest.Response) {
	c.s.t.Helper()
	c.stat().foreign++
	if r.Status < 400 || r.Status != absent.Status || r.ErrorCode() != absent.ErrorCode() {
		c.s.t.Errorf("%s as workspace %d with workspace %d's id: %d %s; with an id that exists nowhere: %d %s: %s",
			c.op, c.w.i, c.x.i, r.Status, r.ErrorCode(), absent.Status, absent.ErrorCode(), r.Raw)
	}
}

// madeUp is a well-formed id of the type of like that no row has.
func madeUp(like string) string {
	prefix, _, _ := strings.Cut(like, "_")
	return pmapi.FormatID(prefix+"_", uuid.Must(uuid.NewV7()))
}

// probed records a foreign-mode call whose answer only has to hold to the
// property (check did that): a search, a foreign cursor.
func (c isoCtx) probed() { c.stat().foreign++ }

// coverage fails an operation that never succeeded for its own workspace or
// was never tried with another's ids: its driver tests nothing.
func (s *isoRun) coverage(ops []string) {
	for _, op := range ops {
		st := s.stats[op]
		if st == nil || st.ownOK == 0 {
			s.t.Errorf("%s never succeeded for its own workspace (%+v): its driver tests nothing", op, st)
		}
		if _, ok := isoOwnOnly[op]; !ok && (st == nil || st.foreign == 0) {
			s.t.Errorf("%s was never tried with another workspace's ids", op)
		}
	}
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

const (
	isoR    = "/openapi/v1/resource/"
	isoRRCA = isoR + "rrca"
	isoApps = "/openapi/v1/apps/"
)

// The helpers below make what the drivers need, as w, and remember it.

func (c isoCtx) newProject() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"project/create", map[string]any{"name": c.s.text(w), "description": c.s.text(w), "ownerId": w.tn.UserID, "memberIds": []string{w.user2}})
	w.add("project", r.Str("id"))
	return r
}

func (c isoCtx) newTask() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"task/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"), "title": c.s.text(w), "description": c.s.text(w),
		"assigneeId": w.tn.UserID, "reporterId": w.user2, "priority": 1 + c.s.rnd.IntN(5), "dueDate": "2027-03-01T00:00:00Z"})
	w.add("task", r.Str("id"))
	return r
}

func (c isoCtx) newRisk() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"risk/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"), "title": c.s.text(w), "description": c.s.text(w), "ownerId": w.tn.UserID})
	w.add("risk", r.Str("id"))
	return r
}

func (c isoCtx) newNote() *apitest.Response {
	w := c.w
	r := c.key("POST", isoR+"note/create", map[string]any{"projectId": w.pick(c.s.rnd, "project"), "body": c.s.text(w)})
	w.add("note", r.Str("id"))
	return r
}

func (c isoCtx) newActionItem() *apitest.Response {
	w := c.w
	body := map[string]any{"title": c.s.text(w), "description": c.s.text(w), "ownerHint": "team " + w.mark, "dueDate": "2027-02-01T00:00:00Z"}
	if c.s.rnd.IntN(2) == 0 {
		body["projectId"] = w.pick(c.s.rnd, "project")
	}
	r := c.key("POST", isoR+"action-item/create", body)
	w.add("action-item", r.Str("id"))
	return r
}

func (c isoCtx) newRRCA() *apitest.Response {
	w := c.w
	r := c.key("POST", isoRRCA, map[string]any{"title": c.s.text(w), "problemStatement": c.s.text(w), "projectId": w.pick(c.s.rnd, "project")})
	w.add("rrca", r.Str("id"))
	return r
}

// newNode adds a node of kind to the analysis, under parent when given.
func (c isoCtx) newNode(rrca, kind, parent string) string {
	w := c.w
	body := map[string]any{"kind": kind, "text": c.s.text(w)}
	if parent != "" {
		body["parentId"] = parent
	}
	r := c.key("POST", isoRRCA+"/"+rrca+"/nodes", body)
	if id := r.Str("id"); id != "" {
		w.addNode(rrca, kind, id)
	}
	return r.Str("id")
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

func (c isoCtx) newCorrective() *apitest.Response {
	w := c.w
	rrca, root := w.pickNode(c.s.rnd, "ROOT_CAUSE")
	r := c.key("POST", isoRRCA+"/"+rrca+"/corrective-actions", map[string]any{"nodeId": root, "title": c.s.text(w), "ownerHint": "team " + w.mark})
	w.add("action-item", r.Str("actionItem.id"))
	return r
}

func (c isoCtx) newSubscription() *apitest.Response {
	w := c.w
	r := c.console("POST", isoApps+w.tn.ClientID+"/webhooks", map[string]any{"url": c.s.hook + "/" + w.mark, "events": []string{"*"}})
	w.add("subscription", r.Str("id"))
	return r
}

func (c isoCtx) newKey() *apitest.Response {
	w := c.w
	r := c.console("POST", isoApps+w.tn.ClientID+"/keys", map[string]any{"name": "spare " + w.mark, "scopes": []string{"tasks:read"}})
	w.add("key", r.Str("id"))
	w.add("spare", r.Str("id"))
	return r
}

// newDelivery sends the test event, which records a delivery.
func (c isoCtx) newDelivery() *apitest.Response {
	w := c.w
	sub := w.pick(c.s.rnd, "subscription")
	r := c.console("POST", isoApps+w.tn.ClientID+"/webhooks/"+sub+"/test", nil)
	w.add("delivery", r.Str("deliveryId"))
	return r
}

// setup gives every workspace one of everything, in stages that interleave
// the workspaces, then waits for the background work (similarity, 5-why and
// look-across runs, fan-out) so that the random stream meets its results.
func (s *isoRun) setup() {
	for _, w := range s.ws {
		r := s.env.Do(s.t, apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + w.tn.WorkspaceID + "/users", Header: s.env.Admin(),
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
			c.key("POST", isoR+"action-item/"+c.w.pick(c.s.rnd, "action-item")+"/log", map[string]any{"kind": "NOTE", "message": c.s.text(c.w)})
		},
		// Two analyses in the first project whose root cause is the
		// mechanism of a risk in the second: look-across proposes that
		// project for each, so there are suggestions to apply and reject.
		func(c isoCtx) {
			w, ps := c.w, c.w.live["project"]
			c.key("POST", isoR+"risk/create", map[string]any{"projectId": ps[1], "title": c.s.textWith(w, isoWords[1])})
			for range 2 {
				r := c.key("POST", isoRRCA, map[string]any{"title": c.s.text(w), "problemStatement": c.s.text(w), "projectId": ps[0]})
				a := r.Str("id")
				w.add("rrca", a)
				why := c.newNode(a, "WHY", "")
				root := c.key("POST", isoRRCA+"/"+a+"/nodes", map[string]any{"kind": "ROOT_CAUSE", "text": c.s.textWith(w, isoWords[1]), "parentId": why}).Str("id")
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

// isoDrivers drive each operation, keyed "METHOD /path" as the server
// declares it.
var isoDrivers = isoMerge(isoProjectDrivers(), isoTaskDrivers(), isoRiskNoteDrivers(), isoActionItemDrivers(),
	isoRRCADrivers(), isoWebhookDrivers(), isoConsoleDrivers())

func isoMerge(ms ...map[string]func(isoCtx)) map[string]func(isoCtx) {
	out := map[string]func(isoCtx){}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func oneOf[T any](c isoCtx, vs ...T) T { return vs[c.s.rnd.IntN(len(vs))] }

// isoDetail reads one row by ?id=.
func isoDetail(path, kind string) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			id := c.x.pick(c.s.rnd, kind)
			c.notFound(c.get(path, map[string]string{"id": id}, id))
			return
		}
		c.own(c.get(path, map[string]string{"id": c.w.pick(c.s.rnd, kind)}))
	}
}

// isoByID posts {field: id} plus what body adds; another workspace's id is 404.
func isoByID(method, path, kind, field string, body func(c isoCtx) map[string]any) func(isoCtx) {
	return func(c isoCtx) {
		b := map[string]any{}
		if body != nil {
			b = body(c)
		}
		if c.foreign {
			id := c.x.pick(c.s.rnd, kind)
			b[field] = id
			c.notFound(c.key(method, path, b, id))
			return
		}
		b[field] = c.w.pick(c.s.rnd, kind)
		c.own(c.key(method, path, b))
	}
}

// isoList lists with one of w's own filters, or with a filter naming x's id or
// word (which matches nothing), or with x's cursor of the same list (which
// pages w's rows only).
func isoList(path string, own func(c isoCtx) []map[string]string, foreign func(c isoCtx) []map[string]string) func(isoCtx) {
	return func(c isoCtx) {
		if !c.foreign {
			c.own(c.get(path, oneOf(c, own(c)...)))
			return
		}
		if cur := c.s.cursors[path][c.x.i]; cur != "" && c.s.rnd.IntN(3) == 0 {
			c.probed()
			c.get(path, map[string]string{"cursor": cur, "limit": "2"})
			return
		}
		q := oneOf(c, foreign(c)...)
		var sent []string
		for _, v := range q {
			sent = append(sent, v)
		}
		c.empty(c.get(path, q, sent...))
	}
}

// isoUserRefused: a body naming another workspace's user is 400 naming the
// field (users are references, not resources the caller addresses).
// isoUserUpdate updates a row by its id field: half of the foreign tries name
// another workspace's user in userField (400), the rest another workspace's
// row (404, as isoByID).
func isoUserUpdate(method, path, kind, idField, userField string, body func(c isoCtx) map[string]any) func(isoCtx) {
	byID := isoByID(method, path, kind, idField, body)
	return func(c isoCtx) {
		if c.foreign && c.s.rnd.IntN(2) == 0 {
			c.userRefused(method, path, map[string]any{idField: c.w.pick(c.s.rnd, kind)}, userField)
			return
		}
		byID(c)
	}
}

// isoCreateInProject creates a row of a project with newRow; a foreign try
// names another workspace's project (404) or, half the time when the row has
// a userField, another workspace's user there (400). textField is the row's
// required text.
func isoCreateInProject(path, textField, userField string, newRow func(c isoCtx) *apitest.Response) func(isoCtx) {
	return func(c isoCtx) {
		if !c.foreign {
			c.own(newRow(c))
			return
		}
		if userField != "" && c.s.rnd.IntN(2) == 0 {
			c.userRefused("POST", path, map[string]any{"projectId": c.w.pick(c.s.rnd, "project"), textField: c.s.text(c.w)}, userField)
			return
		}
		id := c.x.pick(c.s.rnd, "project")
		c.notFound(c.key("POST", path, map[string]any{"projectId": id, textField: c.s.text(c.w)}, id))
	}
}

func (c isoCtx) userRefused(method, path string, body map[string]any, field string) {
	c.s.t.Helper()
	body[field] = c.x.tn.UserID
	r := c.key(method, path, body, c.x.tn.UserID)
	c.refused(r, 400, "VALIDATION_FAILED")
	e, _ := r.Body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if f, _ := d["field"].(string); r.Status == 400 && f != field {
		c.s.t.Errorf("%s with workspace %d's user in %s: details.field %q", c.op, c.x.i, field, f)
	}
}

func isoProjectDrivers() map[string]func(isoCtx) {
	const base = isoR + "project/"
	return map[string]func(isoCtx){
		"GET " + base + "list": isoList(base+"list", func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"q": c.w.mark}, {"ragStatus": "GREEN"}, {"includeArchived": "true"}, {"ownerId": c.w.tn.UserID}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"q": c.x.mark}, {"ownerId": c.x.tn.UserID}}
		}),
		"GET " + base + "detail": isoDetail(base+"detail", "project"),
		"POST " + base + "create": func(c isoCtx) {
			if c.foreign {
				c.userRefused("POST", base+"create", map[string]any{"name": c.s.text(c.w)}, "ownerId")
				return
			}
			c.own(c.newProject())
		},
		"POST " + base + "update": isoUserUpdate("POST", base+"update", "project", "id", "ownerId", func(c isoCtx) map[string]any {
			return map[string]any{"name": c.s.text(c.w), "ragStatus": oneOf(c, "GREEN", "AMBER", "RED")}
		}),
		"POST " + base + "archive": isoByID("POST", base+"archive", "project", "id", nil),
		"POST " + base + "restore": isoByID("POST", base+"restore", "project", "id", nil),
		"POST " + base + "delete": isoDelete(base, "project", "id", true, func(c isoCtx) map[string]any {
			return map[string]any{"name": c.s.text(c.w)}
		}),
		"GET " + base + "members": func(c isoCtx) {
			if c.foreign {
				id := c.x.pick(c.s.rnd, "project")
				c.notFound(c.get(base+"members", map[string]string{"projectId": id}, id))
				return
			}
			c.own(c.get(base+"members", map[string]string{"projectId": c.w.pick(c.s.rnd, "project")}))
		},
		"POST " + base + "member/add":    isoMember(base + "member/add"),
		"POST " + base + "member/remove": isoMember(base + "member/remove"),
	}
}

// isoDelete deletes a row (base: its resource's path) that w makes for it
// with the create body, archived first when the contract deletes only archived
// rows; another workspace's row is 404 (for a project, not the 409 an
// unarchived project of one's own gets: the answer must not tell it exists).
func isoDelete(base, kind, field string, archiveFirst bool, create func(c isoCtx) map[string]any) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			id := c.x.pick(c.s.rnd, kind)
			c.notFound(c.key("POST", base+"delete", map[string]any{field: id}, id))
			return
		}
		id := c.key("POST", base+"create", create(c)).Str("id")
		if archiveFirst {
			c.key("POST", base+"archive", map[string]any{field: id})
		}
		c.own(c.key("POST", base+"delete", map[string]any{field: id}))
	}
}

// isoMember adds or removes a member: another workspace's project is 404, its
// user 400 naming userId.
func isoMember(path string) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			if c.s.rnd.IntN(2) == 0 {
				body := map[string]any{"projectId": c.w.pick(c.s.rnd, "project"), "userId": c.x.tn.UserID}
				r := c.key("POST", path, body, c.x.tn.UserID)
				body["userId"] = uuid.NewString()
				c.likeAbsent(r, c.key("POST", path, body))
				return
			}
			id := c.x.pick(c.s.rnd, "project")
			c.notFound(c.key("POST", path, map[string]any{"projectId": id, "userId": c.w.user2}, id))
			return
		}
		body := map[string]any{"projectId": c.w.pick(c.s.rnd, "project"), "userId": oneOf(c, c.w.user2, c.w.tn.UserID),
			"role": oneOf(c, "MEMBER", "VIEWER")}
		// An add of a member is 409 and a removal of a non-member 404, so the
		// opposite call goes first: left to chance, a run's few own adds could
		// all name members (seed 1795591418519120743) and coverage failed.
		c.key("POST", memberOpposite(path), body)
		c.own(c.key("POST", path, body))
	}
}

// memberOpposite is member/remove for member/add and the other way round.
func memberOpposite(path string) string {
	if add, ok := strings.CutSuffix(path, "member/add"); ok {
		return add + "member/remove"
	}
	return strings.TrimSuffix(path, "member/remove") + "member/add"
}

// isoBatch drives a batch: w's own operations, or one naming another
// workspace's row, which is 404 for an atomic batch and a NOT_FOUND result
// for that item otherwise.
func isoBatch(path, kind, field string, own func(c isoCtx) []map[string]any) func(isoCtx) {
	return func(c isoCtx) {
		atomic := c.s.rnd.IntN(2) == 0
		if !c.foreign {
			c.own(c.key("POST", path, map[string]any{"atomic": atomic, "operations": own(c)}))
			return
		}
		id := c.x.pick(c.s.rnd, kind)
		ops := append(own(c)[:1], map[string]any{"op": "archive", field: id})
		r := c.key("POST", path, map[string]any{"atomic": atomic, "operations": ops}, id)
		if atomic {
			c.notFound(r)
			return
		}
		c.probed()
		res, _ := r.Data()["results"].([]any)
		if r.Status != 201 || len(res) != 2 {
			c.s.t.Errorf("%s with workspace %d's %s: %d %s", c.op, c.x.i, id, r.Status, r.Raw)
			return
		}
		if e, _ := res[1].(map[string]any)["error"].(map[string]any); e["code"] != "NOT_FOUND" {
			c.s.t.Errorf("%s: item naming workspace %d's %s: %v, want NOT_FOUND", c.op, c.x.i, id, res[1])
		}
	}
}

// isoAssigned is a resource of a project with a user reference (a task's
// assignee, a risk's owner), for the drivers such resources share: list,
// detail, create, update by POST and PATCH, archive and restore.
type isoAssigned struct {
	base, kind, idField, userField string
	// ownFilters are list filters over w's rows; foreignFilters name x's ids
	// and word, so they match nothing.
	ownFilters, foreignFilters func(c isoCtx) []map[string]string
	newRow                     func(c isoCtx) *apitest.Response
	update                     func(c isoCtx) map[string]any
}

func (r isoAssigned) drivers() map[string]func(isoCtx) {
	base := r.base
	return map[string]func(isoCtx){
		"GET " + base + "list":     isoList(base+"list", r.ownFilters, r.foreignFilters),
		"GET " + base + "detail":   isoDetail(base+"detail", r.kind),
		"POST " + base + "create":  isoCreateInProject(base+"create", "title", r.userField, r.newRow),
		"POST " + base + "update":  isoUserUpdate("POST", base+"update", r.kind, r.idField, r.userField, r.update),
		"PATCH " + base + "update": isoUserUpdate("PATCH", base+"update", r.kind, r.idField, r.userField, r.update),
		"POST " + base + "archive": isoByID("POST", base+"archive", r.kind, r.idField, nil),
		"POST " + base + "restore": isoByID("POST", base+"restore", r.kind, r.idField, nil),
	}
}

func isoTaskDrivers() map[string]func(isoCtx) {
	const base = isoR + "task/"
	return isoMerge(isoAssigned{
		base: base, kind: "task", idField: "taskId", userField: "assigneeId",
		ownFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"status": "TODO"}, {"assigneeId": c.w.tn.UserID},
				{"q": c.w.mark}, {"dueAfter": "2027-01-01"}, {"includeArchived": "true"}, {"limit": "1"}}
		},
		foreignFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"assigneeId": c.x.tn.UserID}, {"q": c.x.mark}}
		},
		newRow: isoCtx.newTask,
		update: func(c isoCtx) map[string]any {
			b := map[string]any{"title": c.s.text(c.w), "priority": 1 + c.s.rnd.IntN(5)}
			if c.s.rnd.IntN(3) == 0 {
				b["status"] = oneOf(c, "IN_PROGRESS", "TODO", "REVIEW")
			}
			return b
		},
	}.drivers(), map[string]func(isoCtx){
		"POST " + base + "batch": isoBatch(base+"batch", "task", "taskId", func(c isoCtx) []map[string]any {
			return []map[string]any{
				{"op": "create", "projectId": c.w.pick(c.s.rnd, "project"), "title": c.s.text(c.w)},
				{"op": "update", "taskId": c.w.pick(c.s.rnd, "task"), "title": c.s.text(c.w)},
				{"op": oneOf(c, "archive", "restore"), "taskId": c.w.pick(c.s.rnd, "task")},
			}
		}),
	})
}

func isoRiskNoteDrivers() map[string]func(isoCtx) {
	const risk, note = isoR + "risk/", isoR + "note/"
	noteUpdate := func(method string) func(isoCtx) {
		return isoByID(method, note+"update", "note", "noteId", func(c isoCtx) map[string]any { return map[string]any{"body": c.s.text(c.w)} })
	}
	return isoMerge(isoAssigned{
		base: risk, kind: "risk", idField: "riskId", userField: "ownerId",
		ownFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"status": "OPEN"}, {"severity": "HIGH"}, {"ownerId": c.w.tn.UserID},
				{"q": c.w.mark}, {"createdAfter": "2020-01-01T00:00:00Z"}, {"includeArchived": "true"}, {"limit": "1"}}
		},
		foreignFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"ownerId": c.x.tn.UserID}, {"q": c.x.mark}}
		},
		newRow: isoCtx.newRisk,
		update: func(c isoCtx) map[string]any {
			return map[string]any{"title": c.s.text(c.w), "severity": oneOf(c, "LOW", "MEDIUM", "HIGH", "CRITICAL")}
		},
	}.drivers(), map[string]func(isoCtx){
		"GET " + note + "list": isoList(note+"list", func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"q": c.w.mark}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"q": c.x.mark}}
		}),
		"GET " + note + "detail":   isoDetail(note+"detail", "note"),
		"POST " + note + "create":  isoCreateInProject(note+"create", "body", "", isoCtx.newNote),
		"POST " + note + "update":  noteUpdate("POST"),
		"PATCH " + note + "update": noteUpdate("PATCH"),
		"POST " + note + "delete": isoDelete(note, "note", "noteId", false, func(c isoCtx) map[string]any {
			return map[string]any{"projectId": c.w.pick(c.s.rnd, "project"), "body": c.s.text(c.w)}
		}),
	})
}

func isoActionItemDrivers() map[string]func(isoCtx) {
	const base = isoR + "action-item/"
	return map[string]func(isoCtx){
		"GET " + base + "list": isoList(base+"list", func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"q": c.w.mark}, {"ownerHint": c.w.mark}, {"status": "OPEN"},
				{"sort": "dueDate", "sortDir": "asc"}, {"includeArchived": "true"}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"q": c.x.mark}, {"ownerHint": c.x.mark}}
		}),
		"GET " + base + "detail":  isoDetail(base+"detail", "action-item"),
		"POST " + base + "create": isoCreateInProject(base+"create", "title", "", isoCtx.newActionItem),
		"POST " + base + "attach-project": func(c isoCtx) {
			item, prj := c.w.pick(c.s.rnd, "action-item"), c.w.pick(c.s.rnd, "project")
			if !c.foreign {
				c.own(c.key("POST", base+"attach-project", map[string]any{"actionItemId": item, "projectId": prj}))
				return
			}
			if c.s.rnd.IntN(2) == 0 {
				item = c.x.pick(c.s.rnd, "action-item")
				c.notFound(c.key("POST", base+"attach-project", map[string]any{"actionItemId": item, "projectId": prj}, item))
				return
			}
			prj = c.x.pick(c.s.rnd, "project")
			c.notFound(c.key("POST", base+"attach-project", map[string]any{"actionItemId": item, "projectId": prj}, prj))
		},
		"POST " + base + "update": isoByID("POST", base+"update", "action-item", "actionItemId", func(c isoCtx) map[string]any {
			b := map[string]any{"title": c.s.text(c.w), "ownerHint": "team " + c.w.mark}
			if c.s.rnd.IntN(3) == 0 {
				b["status"] = oneOf(c, "IN_PROGRESS", "OPEN", "DONE")
			}
			return b
		}),
		"POST " + base + "archive": isoByID("POST", base+"archive", "action-item", "actionItemId", nil),
		"POST " + base + "restore": isoByID("POST", base+"restore", "action-item", "actionItemId", nil),
		"POST " + base + "delete": isoDelete(base, "action-item", "actionItemId", false, func(c isoCtx) map[string]any {
			return map[string]any{"title": c.s.text(c.w)}
		}),
		"POST " + base + "batch": isoBatch(base+"batch", "action-item", "actionItemId", func(c isoCtx) []map[string]any {
			return []map[string]any{
				{"op": "create", "title": c.s.text(c.w), "projectId": c.w.pick(c.s.rnd, "project")},
				{"op": "update", "actionItemId": c.w.pick(c.s.rnd, "action-item"), "title": c.s.text(c.w)},
				{"op": "attach-project", "actionItemId": c.w.pick(c.s.rnd, "action-item"), "projectId": c.w.pick(c.s.rnd, "project")},
				{"op": oneOf(c, "archive", "restore"), "actionItemId": c.w.pick(c.s.rnd, "action-item")},
			}
		}),
		"POST " + base + "{actionItemId}/log": func(c isoCtx) {
			body := map[string]any{"kind": oneOf(c, "NOTE", "PROGRESS", "BLOCKER", "EVIDENCE"), "message": c.s.text(c.w)}
			if c.foreign {
				id := c.x.pick(c.s.rnd, "action-item")
				c.notFound(c.key("POST", base+id+"/log", body, id))
				return
			}
			c.own(c.key("POST", base+c.w.pick(c.s.rnd, "action-item")+"/log", body))
		},
		"GET " + base + "{actionItemId}/logs": func(c isoCtx) {
			if c.foreign {
				id := c.x.pick(c.s.rnd, "action-item")
				c.notFound(c.get(base+id+"/logs", nil, id))
				return
			}
			c.own(c.get(base+c.w.pick(c.s.rnd, "action-item")+"/logs", oneOf(c, map[string]string{}, map[string]string{"kind": "NOTE"})))
		},
	}
}

// isoOnRRCA drives an operation on one analysis (path built by at): another
// workspace's analysis is 404.
func isoOnRRCA(method string, at func(c isoCtx, rrca string) string, body func(c isoCtx) any) func(isoCtx) {
	return func(c isoCtx) {
		var b any
		if body != nil {
			b = body(c)
		}
		if c.foreign {
			id := c.x.pick(c.s.rnd, "rrca")
			c.notFound(c.key(method, at(c, id), b, id))
			return
		}
		c.own(c.key(method, at(c, c.w.pick(c.s.rnd, "rrca")), b))
	}
}

// isoOnRRCAGet is isoOnRRCA for reads with query parameters.
func isoOnRRCAGet(at func(rrca string) string, q func(c isoCtx) map[string]string) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			id := c.x.pick(c.s.rnd, "rrca")
			c.notFound(c.get(at(id), nil, id))
			return
		}
		var query map[string]string
		if q != nil {
			query = q(c)
		}
		c.own(c.get(at(c.w.pick(c.s.rnd, "rrca")), query))
	}
}

// isoRun reads a suggestion run: another workspace's run is 404 under its own
// analysis and under one of w's.
func isoRunRead(runs func(w *isoWS) map[string][]string, at func(rrca, run string) string) func(isoCtx) {
	return func(c isoCtx) {
		pick := func(w *isoWS) (string, string) {
			for _, a := range c.s.rnd.Perm(len(w.live["rrca"])) {
				if rs := runs(w)[w.live["rrca"][a]]; len(rs) > 0 {
					return w.live["rrca"][a], rs[c.s.rnd.IntN(len(rs))]
				}
			}
			return w.pick(c.s.rnd, "rrca"), ""
		}
		if c.foreign {
			a, run := pick(c.x)
			if c.s.rnd.IntN(2) == 0 {
				a = c.w.pick(c.s.rnd, "rrca")
			}
			c.notFound(c.get(at(a, run), nil, a, run))
			return
		}
		a, run := pick(c.w)
		r := c.get(at(a, run), nil)
		c.own(r)
		if nodes, _ := r.Data()["nodes"].([]any); len(nodes) > 0 {
			for _, n := range nodes {
				if id, _ := n.(map[string]any)["id"].(string); id != "" && !slices.Contains(c.w.nodes[a]["WHY_SUGGESTION"], id) {
					c.w.addNode(a, "WHY_SUGGESTION", id)
				}
			}
		}
	}
}

// isoSuggestion decides a look-across suggestion of w (apply or reject);
// another workspace's is 404 under its analysis and under one of w's.
func isoSuggestion(verb string, body func(c isoCtx) any) func(isoCtx) {
	return func(c isoCtx) {
		split := func(v string) (string, string) { a, sid, _ := strings.Cut(v, "/"); return a, sid }
		if c.foreign {
			a, sid := split(c.x.pick(c.s.rnd, "suggestion"))
			if c.s.rnd.IntN(2) == 0 {
				a = c.w.pick(c.s.rnd, "rrca")
			}
			c.notFound(c.key("POST", isoRRCA+"/"+a+"/look-across/"+sid+"/"+verb, body(c), a, sid))
			return
		}
		v := c.w.pick(c.s.rnd, "proposed")
		a, sid := split(v)
		r := c.key("POST", isoRRCA+"/"+a+"/look-across/"+sid+"/"+verb, body(c))
		if c.own(r) {
			c.w.drop("proposed", v)
		}
	}
}

// isoStartRun starts a suggestion run (sub: its path under the analysis) on
// one of w's analyses and remembers its id in runs for isoRunRead; another
// workspace's analysis is 404.
func isoStartRun(sub string, runs func(w *isoWS) map[string][]string) func(isoCtx) {
	foreign := isoOnRRCA("POST", func(_ isoCtx, a string) string { return isoRRCA + "/" + a + sub }, nil)
	return func(c isoCtx) {
		if c.foreign {
			foreign(c)
			return
		}
		a := c.w.pick(c.s.rnd, "rrca")
		r := c.key("POST", isoRRCA+"/"+a+sub, nil)
		if c.own(r) {
			m := runs(c.w)
			m[a] = append(m[a], r.Str("id"))
		}
	}
}

func isoRRCADrivers() map[string]func(isoCtx) {
	one := func(sub string) func(c isoCtx, a string) string {
		return func(_ isoCtx, a string) string { return isoRRCA + "/" + a + sub }
	}
	oneGet := func(sub string) func(a string) string {
		return func(a string) string { return isoRRCA + "/" + a + sub }
	}
	return map[string]func(isoCtx){
		"GET " + isoRRCA: isoList(isoRRCA, func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"phase": "DEFINE"}, {"includeArchived": "true"},
				{"sourceRiskId": c.w.pick(c.s.rnd, "risk")}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"sourceRiskId": c.x.pick(c.s.rnd, "risk")}}
		}),
		"POST " + isoRRCA: func(c isoCtx) {
			if !c.foreign {
				if c.s.rnd.IntN(2) == 0 {
					r := c.key("POST", isoRRCA, map[string]any{"sourceRiskId": c.w.pick(c.s.rnd, "risk")})
					c.w.add("rrca", r.Str("id"))
					c.own(r)
					return
				}
				c.own(c.newRRCA())
				return
			}
			if c.s.rnd.IntN(2) == 0 {
				id := c.x.pick(c.s.rnd, "risk")
				c.notFound(c.key("POST", isoRRCA, map[string]any{"sourceRiskId": id}, id))
				return
			}
			id := c.x.pick(c.s.rnd, "project")
			c.notFound(c.key("POST", isoRRCA, map[string]any{"title": c.s.text(c.w), "projectId": id}, id))
		},
		"GET " + isoRRCA + "/{rrcaId}": isoOnRRCAGet(oneGet(""), nil),
		"PATCH " + isoRRCA + "/{rrcaId}": isoOnRRCA("PATCH", one(""), func(c isoCtx) any {
			return map[string]any{"title": c.s.text(c.w), "problemStatement": c.s.text(c.w)}
		}),
		"POST " + isoRRCA + "/{rrcaId}/advance": isoOnRRCA("POST", one("/advance"), nil),
		"POST " + isoRRCA + "/{rrcaId}/archive": isoOnRRCA("POST", one("/archive"), nil),
		"POST " + isoRRCA + "/{rrcaId}/restore": isoOnRRCA("POST", one("/restore"), nil),
		"GET " + isoRRCA + "/{rrcaId}/nodes": isoOnRRCAGet(oneGet("/nodes"), func(c isoCtx) map[string]string {
			return oneOf(c, map[string]string{}, map[string]string{"kind": "WHY"}, map[string]string{"kind": "WHY_SUGGESTION"})
		}),
		// A parent from another workspace is a bad parent of this analysis:
		// 400 naming parentId, as a node of another analysis is.
		"POST " + isoRRCA + "/{rrcaId}/nodes": func(c isoCtx) {
			kind := oneOf(c, "WHY", "CAUSE", "ROOT_CAUSE", "CONTRIBUTING_FACTOR", "ESCAPE_POINT", "EVIDENCE")
			if !c.foreign {
				a, parent := c.w.pickNode(c.s.rnd, "")
				if c.s.rnd.IntN(3) == 0 {
					parent = ""
				}
				st := c.stat()
				st.own++
				if c.newNode(a, kind, parent) != "" {
					st.ownOK++
				}
				return
			}
			if c.s.rnd.IntN(2) == 0 {
				id := c.x.pick(c.s.rnd, "rrca")
				c.notFound(c.key("POST", isoRRCA+"/"+id+"/nodes", map[string]any{"kind": kind, "text": c.s.text(c.w)}, id))
				return
			}
			_, parent := c.x.pickNode(c.s.rnd, "")
			at := isoRRCA + "/" + c.w.pick(c.s.rnd, "rrca") + "/nodes"
			c.likeAbsent(c.key("POST", at, map[string]any{"kind": kind, "text": c.s.text(c.w), "parentId": parent}, parent),
				c.key("POST", at, map[string]any{"kind": kind, "text": c.s.text(c.w), "parentId": madeUp(parent)}))
		},
		"DELETE " + isoRRCA + "/{rrcaId}/nodes/{nodeId}": func(c isoCtx) {
			if c.foreign {
				a, node := c.x.pickNode(c.s.rnd, "")
				if c.s.rnd.IntN(2) == 0 {
					a = c.w.pick(c.s.rnd, "rrca")
				}
				c.notFound(c.key("DELETE", isoRRCA+"/"+a+"/nodes/"+node, nil, a, node))
				return
			}
			a := c.w.pick(c.s.rnd, "rrca")
			id := c.key("POST", isoRRCA+"/"+a+"/nodes", map[string]any{"kind": "EVIDENCE", "text": c.s.text(c.w)}).Str("id")
			c.own(c.key("DELETE", isoRRCA+"/"+a+"/nodes/"+id, nil))
		},
		"POST " + isoRRCA + "/{rrcaId}/nodes/{nodeId}/accept": func(c isoCtx) {
			if c.foreign {
				a, node := c.x.pickNode(c.s.rnd, "")
				if c.s.rnd.IntN(2) == 0 {
					a = c.w.pick(c.s.rnd, "rrca")
				}
				c.notFound(c.key("POST", isoRRCA+"/"+a+"/nodes/"+node+"/accept", nil, a, node))
				return
			}
			a, node := c.w.pickNode(c.s.rnd, "WHY_SUGGESTION")
			if c.own(c.key("POST", isoRRCA+"/"+a+"/nodes/"+node+"/accept", nil)) {
				c.w.nodes[a]["WHY_SUGGESTION"] = slices.DeleteFunc(c.w.nodes[a]["WHY_SUGGESTION"], func(v string) bool { return v == node })
				c.w.addNode(a, "WHY", node)
			}
		},
		"POST " + isoRRCA + "/{rrcaId}/corrective-actions": func(c isoCtx) {
			if !c.foreign {
				c.own(c.newCorrective())
				return
			}
			if c.s.rnd.IntN(2) == 0 {
				a, root := c.x.pickNode(c.s.rnd, "ROOT_CAUSE")
				c.notFound(c.key("POST", isoRRCA+"/"+a+"/corrective-actions", map[string]any{"nodeId": root, "title": c.s.text(c.w)}, a, root))
				return
			}
			// Under w's own analysis, the contract makes a node that is not
			// one of its ROOT_CAUSE nodes 400 naming nodeId.
			_, root := c.x.pickNode(c.s.rnd, "ROOT_CAUSE")
			a := c.w.pick(c.s.rnd, "rrca")
			at := isoRRCA + "/" + a + "/corrective-actions"
			c.likeAbsent(c.key("POST", at, map[string]any{"nodeId": root, "title": c.s.text(c.w)}, root),
				c.key("POST", at, map[string]any{"nodeId": madeUp(root), "title": c.s.text(c.w)}))
		},
		"GET " + isoRRCA + "/{rrcaId}/corrective-actions": isoOnRRCAGet(oneGet("/corrective-actions"), nil),
		"GET " + isoRRCA + "/{rrcaId}/similar": isoOnRRCAGet(oneGet("/similar"), func(c isoCtx) map[string]string {
			return oneOf(c, map[string]string{}, map[string]string{"limit": "3"})
		}),
		"POST " + isoRRCA + "/{rrcaId}/5why/suggest": isoStartRun("/5why/suggest", func(w *isoWS) map[string][]string { return w.runs5 }),
		"GET " + isoRRCA + "/{rrcaId}/5why/suggestions/{runId}": isoRunRead(func(w *isoWS) map[string][]string { return w.runs5 },
			func(a, run string) string { return isoRRCA + "/" + a + "/5why/suggestions/" + run }),
		"GET " + isoRRCA + "/{rrcaId}/look-across": func(c isoCtx) {
			if c.foreign {
				isoOnRRCAGet(oneGet("/look-across"), nil)(c)
				return
			}
			a := c.w.pick(c.s.rnd, "rrca")
			r := c.get(isoRRCA+"/"+a+"/look-across", nil)
			c.own(r)
			for _, it := range r.Items() {
				v := a + "/" + it["id"].(string)
				if !slices.Contains(c.w.live["suggestion"], v) {
					c.w.add("suggestion", v)
					if it["status"] == "PROPOSED" {
						c.w.add("proposed", v)
					}
				}
			}
		},
		"POST " + isoRRCA + "/{rrcaId}/look-across/suggest": isoStartRun("/look-across/suggest", func(w *isoWS) map[string][]string { return w.rla }),
		"GET " + isoRRCA + "/{rrcaId}/look-across/runs/{runId}": isoRunRead(func(w *isoWS) map[string][]string { return w.rla },
			func(a, run string) string { return isoRRCA + "/" + a + "/look-across/runs/" + run }),
		"POST " + isoRRCA + "/{rrcaId}/look-across/{suggestionId}/apply": isoSuggestion("apply", func(c isoCtx) any {
			return map[string]any{"ownerHint": "team " + c.w.mark}
		}),
		"POST " + isoRRCA + "/{rrcaId}/look-across/{suggestionId}/reject": isoSuggestion("reject", func(c isoCtx) any {
			return map[string]any{"reason": c.s.text(c.w)}
		}),
	}
}

// isoOnApp drives a console operation on w's app (path built by at from the
// client id and, for sub-resources, an id of kind); another workspace's app,
// or its sub-resource under w's app, is 404.
func isoOnApp(method, kind string, at func(app, id string) string, body func(c isoCtx) any, own func(c isoCtx) string) func(isoCtx) {
	return func(c isoCtx) {
		var b any
		if body != nil {
			b = body(c)
		}
		if c.foreign {
			app, id := c.x.tn.ClientID, c.x.pick(c.s.rnd, kind)
			if kind != "" && c.s.rnd.IntN(2) == 0 {
				app = c.w.tn.ClientID
			}
			c.notFound(c.console(method, at(app, id), b, app, id))
			return
		}
		id := ""
		if own != nil {
			id = own(c)
		} else if kind != "" {
			id = c.w.pick(c.s.rnd, kind)
		}
		c.own(c.console(method, at(c.w.tn.ClientID, id), b))
	}
}

// isoDelivery drives a key operation on one delivery of w's app.
func isoDelivery(method string, at func(id string) string) func(isoCtx) {
	return func(c isoCtx) {
		if c.foreign {
			id := c.x.pick(c.s.rnd, "delivery")
			c.notFound(c.key(method, at(id), nil, id))
			return
		}
		r := c.key(method, at(c.w.pick(c.s.rnd, "delivery")), nil)
		if c.own(r) && method == "POST" {
			c.w.add("delivery", r.Str("id"))
		}
	}
}

func isoWebhookDrivers() map[string]func(isoCtx) {
	hooks := func(app, id string) string { return isoApps + app + "/webhooks" + strings.TrimSuffix("/"+id, "/") }
	sub := func(verb string) func(app, id string) string {
		return func(app, id string) string { return isoApps + app + "/webhooks/" + id + "/" + verb }
	}
	const deliveries = "/openapi/v1/webhooks/deliveries"
	return map[string]func(isoCtx){
		"POST " + isoApps + "{clientId}/webhooks": func(c isoCtx) {
			if !c.foreign {
				if len(c.w.live["subscription"]) < 3 {
					c.own(c.newSubscription())
					return
				}
				r := c.console("POST", isoApps+c.w.tn.ClientID+"/webhooks", map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"task.created"}})
				c.own(r)
				c.console("DELETE", isoApps+c.w.tn.ClientID+"/webhooks/"+r.Str("id"), nil)
				return
			}
			app := c.x.tn.ClientID
			c.notFound(c.console("POST", isoApps+app+"/webhooks", map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"*"}}, app))
		},
		"GET " + isoApps + "{clientId}/webhooks": isoOnApp("GET", "", hooks, nil, nil),
		"DELETE " + isoApps + "{clientId}/webhooks/{subId}": isoOnApp("DELETE", "subscription", hooks, nil, func(c isoCtx) string {
			return c.console("POST", isoApps+c.w.tn.ClientID+"/webhooks", map[string]any{"url": c.s.hook + "/" + c.w.mark, "events": []string{"note.created"}}).Str("id")
		}),
		"PATCH " + isoApps + "{clientId}/webhooks/{subId}": isoOnApp("PATCH", "subscription", hooks, func(c isoCtx) any {
			if c.s.rnd.IntN(2) == 0 {
				return map[string]any{"maxPerSecond": nil}
			}
			return map[string]any{"maxPerSecond": 1000}
		}, nil),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/disable": isoOnApp("POST", "subscription", sub("disable"), nil, nil),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/enable":  isoOnApp("POST", "subscription", sub("enable"), nil, nil),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/test":    isoOnApp("POST", "subscription", sub("test"), nil, nil),
		"POST " + isoApps + "{clientId}/webhooks/{subId}/rotate-secret": isoOnApp("POST", "subscription", sub("rotate-secret"), func(c isoCtx) any {
			return map[string]any{"graceSeconds": 60}
		}, nil),
		"GET " + deliveries: isoList(deliveries, func(c isoCtx) []map[string]string {
			return []map[string]string{{}, {"subscriptionId": c.w.pick(c.s.rnd, "subscription")}, {"eventType": "task.created"}, {"status": "SUCCEEDED"},
				{"since": "2020-01-01T00:00:00Z"}, {"limit": "1"}}
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"subscriptionId": c.x.pick(c.s.rnd, "subscription")}}
		}),
		"GET " + deliveries + "/{deliveryId}":         isoDelivery("GET", func(id string) string { return deliveries + "/" + id }),
		"POST " + deliveries + "/{deliveryId}/replay": isoDelivery("POST", func(id string) string { return deliveries + "/" + id + "/replay" }),
		"POST " + deliveries + "/replay": func(c isoCtx) {
			body := map[string]any{"since": "2020-01-01T00:00:00Z"}
			if c.foreign {
				id := c.x.pick(c.s.rnd, "subscription")
				body["subscriptionId"] = id
				c.notFound(c.key("POST", deliveries+"/replay", body, id))
				return
			}
			body["subscriptionId"] = c.w.pick(c.s.rnd, "subscription")
			c.own(c.key("POST", deliveries+"/replay", body))
		},
	}
}

func isoConsoleDrivers() map[string]func(isoCtx) {
	app := func(sub string) func(app, id string) string {
		return func(app, _ string) string { return isoApps + app + sub }
	}
	key := func(sub string) func(app, id string) string {
		return func(app, id string) string { return isoApps + app + "/keys" + strings.TrimSuffix("/"+id, "/") + sub }
	}
	// Own calls use keys not yet revoked; other workspaces try any.
	spare := func(c isoCtx) string {
		if len(c.w.live["spare"]) == 0 {
			c.newKey()
		}
		return c.w.pick(c.s.rnd, "spare")
	}
	newApp := func(c isoCtx) *apitest.Response {
		return c.console("POST", "/openapi/v1/apps", map[string]any{"workspaceId": c.w.tn.WorkspaceID, "name": c.s.text(c.w), "scopes": []string{"tasks:read"}})
	}
	return map[string]func(isoCtx){
		// Search ranks by similarity, partial words and typos included, so a
		// word of another workspace may well find w's own rows: the answer
		// only has to hold to the property.
		"GET " + isoR + "search": func(c isoCtx) {
			if c.foreign {
				c.probed()
				c.get(isoR+"search", map[string]string{"q": c.x.mark}, c.x.mark)
				return
			}
			words := strings.Fields(oneOf(c, isoWords...))
			q := map[string]string{"q": oneOf(c, c.w.mark, words[0]+" "+words[len(words)-1], words[1])}
			if c.s.rnd.IntN(3) == 0 {
				q["types"] = oneOf(c, "task,risk", "project,note", "action-item,rrca")
			}
			c.own(c.get(isoR+"search", q))
		},
		"GET /openapi/v1/session": func(c isoCtx) { c.own(c.console("GET", "/openapi/v1/session", nil)) },
		"GET /openapi/v1/me":      func(c isoCtx) { c.own(c.key("GET", "/openapi/v1/me", nil)) },
		"GET /openapi/v1/apps":    func(c isoCtx) { c.own(c.console("GET", "/openapi/v1/apps", nil)) },
		// The body's workspaceId must be the signed-in user's workspace;
		// another is not found (404), whether or not it exists.
		"POST /openapi/v1/apps": func(c isoCtx) {
			if c.foreign {
				c.refused(c.console("POST", "/openapi/v1/apps", map[string]any{"workspaceId": c.x.tn.WorkspaceID, "name": c.s.text(c.w), "scopes": []string{}},
					c.x.tn.WorkspaceID), 404, "NOT_FOUND")
				return
			}
			c.own(newApp(c))
		},
		"GET " + isoApps + "{clientId}": isoOnApp("GET", "", app(""), nil, nil),
		"PATCH " + isoApps + "{clientId}": isoOnApp("PATCH", "", app(""), func(c isoCtx) any {
			return map[string]any{"description": c.s.text(c.w)}
		}, nil),
		"DELETE " + isoApps + "{clientId}": func(c isoCtx) {
			if c.foreign {
				isoOnApp("DELETE", "", app(""), nil, nil)(c)
				return
			}
			c.own(c.console("DELETE", isoApps+newApp(c).Str("clientId"), nil))
		},
		"PATCH " + isoApps + "{clientId}/scopes": isoOnApp("PATCH", "", app("/scopes"), func(c isoCtx) any {
			return map[string]any{"scopes": apitest.AllScopes}
		}, nil),
		"POST " + isoApps + "{clientId}/secret/rotate": isoOnApp("POST", "", app("/secret/rotate"), nil, nil),
		"POST " + isoApps + "{clientId}/keys": func(c isoCtx) {
			if c.foreign {
				isoOnApp("POST", "", key(""), func(c isoCtx) any { return map[string]any{"scopes": []string{"tasks:read"}} }, nil)(c)
				return
			}
			c.own(c.newKey())
		},
		"GET " + isoApps + "{clientId}/keys": isoOnApp("GET", "", key(""), nil, nil),
		"DELETE " + isoApps + "{clientId}/keys/{keyId}": func(c isoCtx) {
			if c.foreign {
				isoOnApp("DELETE", "key", key(""), nil, nil)(c)
				return
			}
			id := spare(c)
			if c.own(c.console("DELETE", isoApps+c.w.tn.ClientID+"/keys/"+id, nil)) {
				c.w.drop("spare", id)
			}
		},
		"POST " + isoApps + "{clientId}/keys/{keyId}/regenerate": isoOnApp("POST", "key", key("/regenerate"), nil, spare),
		"PATCH " + isoApps + "{clientId}/keys/{keyId}/name": isoOnApp("PATCH", "key", key("/name"), func(c isoCtx) any {
			return map[string]any{"name": "spare " + c.w.mark}
		}, spare),
		"POST " + isoApps + "{clientId}/keys/{keyId}/renew": isoOnApp("POST", "key", key("/renew"), func(c isoCtx) any {
			return map[string]any{"expiresAt": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)}
		}, spare),
		// Five wrong user codes lock a user out for ten minutes, so each
		// workspace tries at most four of the others'.
		"POST /openapi/v1/oauth/device/approve": func(c isoCtx) {
			from := c.w
			if c.foreign && c.w.approves < 4 {
				from = c.x
				c.w.approves++
			}
			dc := c.s.env.Do(c.s.t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/device/code", Body: map[string]any{"client_id": from.tn.ClientID}})
			c.s.check(from, "device code", dc)
			code, _ := dc.Body["user_code"].(string)
			r := c.console("POST", "/openapi/v1/oauth/device/approve", map[string]any{"user_code": code, "action": oneOf(c, "approve", "deny")}, code)
			if from == c.w {
				c.own(r)
				return
			}
			c.notFound(r)
		},
	}
}
