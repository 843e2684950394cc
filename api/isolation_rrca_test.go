package api_test

import (
	"slices"
	"strings"
)

// The drivers of the root-cause analyses' operations: the analysis, its
// nodes and corrective actions, and its suggestion runs.

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
				if id, _ := n.(map[string]any)["id"].(string); id != "" &&
					!slices.Contains(c.w.nodes[a]["WHY_SUGGESTION"], id) {
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
			return withSync([]map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"phase": "DEFINE"},
				{"includeArchived": "true"}, {"sourceRiskId": c.w.pick(c.s.rnd, "risk")}, {"limit": "1"}})
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")},
				{"sourceRiskId": c.x.pick(c.s.rnd, "risk")}}
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
			return oneOf(c, map[string]string{}, map[string]string{"kind": "WHY"},
				map[string]string{"kind": "WHY_SUGGESTION"})
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
				c.notFound(c.key("POST", isoRRCA+"/"+id+"/nodes", map[string]any{"kind": kind, "text": c.s.text(c.w)},
					id))
				return
			}
			_, parent := c.x.pickNode(c.s.rnd, "")
			at := isoRRCA + "/" + c.w.pick(c.s.rnd, "rrca") + "/nodes"
			c.likeAbsent(c.key("POST", at, map[string]any{"kind": kind, "text": c.s.text(c.w), "parentId": parent},
				parent),
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
			id := c.key("POST", isoRRCA+"/"+a+"/nodes",
				map[string]any{"kind": "EVIDENCE", "text": c.s.text(c.w)}).Str("id")
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
				c.w.nodes[a]["WHY_SUGGESTION"] = slices.DeleteFunc(c.w.nodes[a]["WHY_SUGGESTION"],
					func(v string) bool { return v == node })
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
				c.notFound(c.key("POST", isoRRCA+"/"+a+"/corrective-actions",
					map[string]any{"nodeId": root, "title": c.s.text(c.w)}, a, root))
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
		"POST " + isoRRCA + "/{rrcaId}/5why/suggest": isoStartRun("/5why/suggest",
			func(w *isoWS) map[string][]string { return w.runs5 }),
		"GET " + isoRRCA + "/{rrcaId}/5why/suggestions/{runId}": isoRunRead(
			func(w *isoWS) map[string][]string { return w.runs5 },
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
		"POST " + isoRRCA + "/{rrcaId}/look-across/suggest": isoStartRun("/look-across/suggest",
			func(w *isoWS) map[string][]string { return w.rla }),
		"GET " + isoRRCA + "/{rrcaId}/look-across/runs/{runId}": isoRunRead(
			func(w *isoWS) map[string][]string { return w.rla },
			func(a, run string) string { return isoRRCA + "/" + a + "/look-across/runs/" + run }),
		"POST " + isoRRCA + "/{rrcaId}/look-across/{suggestionId}/apply": isoSuggestion("apply", func(c isoCtx) any {
			return map[string]any{"ownerHint": "team " + c.w.mark}
		}),
		"POST " + isoRRCA + "/{rrcaId}/look-across/{suggestionId}/reject": isoSuggestion("reject", func(c isoCtx) any {
			return map[string]any{"reason": c.s.text(c.w)}
		}),
	}
}
