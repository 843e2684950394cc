package api_test

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// The leak detector: every answer is held to the property, and each driver
// call records what its mode (own or foreign) was answered.

type isoStat struct{ own, ownOK, foreign int }

// isoIDs finds what may carry a workspace's identity in an answer: prefixed
// ids, client ids and UUIDs.
var isoIDs = regexp.MustCompile(`\b(?:prj|tsk|rsk|act|log|rca|nod|cac|lac|not|whk|evt|key|run)_[0-9A-Za-z]{26}\b` +
	`|\bpm_cli_[0-9A-Za-z]{20}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)

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
		c.s.t.Errorf("%s as workspace %d with workspace %d's ids: %d %s, want %d %s: %s", c.op, c.w.i, c.x.i, r.Status,
			r.ErrorCode(), status, code, r.Raw)
	}
}

func (c isoCtx) notFound(r *apitest.Response) { c.s.t.Helper(); c.refused(r, 404, "NOT_FOUND") }

// empty records a foreign-mode list call: a filter naming another
// workspace's id or word matches nothing.
func (c isoCtx) empty(r *apitest.Response) {
	c.s.t.Helper()
	c.stat().foreign++
	if r.Status != 200 || len(r.Items()) != 0 {
		c.s.t.Errorf("%s as workspace %d filtered by workspace %d's id or word: %d %s", c.op, c.w.i, c.x.i, r.Status,
			r.Raw)
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
