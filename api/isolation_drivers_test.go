package api_test

import (
	"strings"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// The drivers' shapes that several resources share: a detail, an update by
// id, a list, a create in a project, a delete, a member, a batch.

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
func isoList(path string, own func(c isoCtx) []map[string]string,
	foreign func(c isoCtx) []map[string]string) func(isoCtx) {
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
			c.userRefused("POST", path, map[string]any{"projectId": c.w.pick(c.s.rnd, "project"),
				textField: c.s.text(c.w)}, userField)
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
