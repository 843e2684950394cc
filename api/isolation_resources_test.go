package api_test

// The drivers of the project, task, risk, note and action-item operations.

func isoProjectDrivers() map[string]func(isoCtx) {
	const base = isoR + "project/"
	return map[string]func(isoCtx){
		"GET " + base + "list": isoList(base+"list", func(c isoCtx) []map[string]string {
			return withSync([]map[string]string{{}, {"q": c.w.mark}, {"ragStatus": "GREEN"}, {"includeArchived": "true"},
				{"ownerId": c.w.tn.UserID}, {"limit": "1"}})
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
		"POST " + base + "update": isoUserUpdate("POST", base+"update", "project", "id", "ownerId",
			func(c isoCtx) map[string]any {
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

func isoTaskDrivers() map[string]func(isoCtx) {
	const base = isoR + "task/"
	return isoMerge(isoAssigned{
		base: base, kind: "task", idField: "taskId", userField: "assigneeId",
		ownFilters: func(c isoCtx) []map[string]string {
			return withSync([]map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"status": "TODO"},
				{"assigneeId": c.w.tn.UserID}, {"q": c.w.mark}, {"dueAfter": "2027-01-01"},
				{"includeArchived": "true"}, {"limit": "1"}})
		},
		foreignFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"assigneeId": c.x.tn.UserID},
				{"q": c.x.mark}}
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
		return isoByID(method, note+"update", "note", "noteId",
			func(c isoCtx) map[string]any { return map[string]any{"body": c.s.text(c.w)} })
	}
	return isoMerge(isoAssigned{
		base: risk, kind: "risk", idField: "riskId", userField: "ownerId",
		ownFilters: func(c isoCtx) []map[string]string {
			return withSync([]map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"status": "OPEN"},
				{"severity": "HIGH"}, {"ownerId": c.w.tn.UserID}, {"q": c.w.mark},
				{"createdAfter": "2020-01-01T00:00:00Z"}, {"includeArchived": "true"}, {"limit": "1"}})
		},
		foreignFilters: func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"ownerId": c.x.tn.UserID},
				{"q": c.x.mark}}
		},
		newRow: isoCtx.newRisk,
		update: func(c isoCtx) map[string]any {
			return map[string]any{"title": c.s.text(c.w), "severity": oneOf(c, "LOW", "MEDIUM", "HIGH", "CRITICAL")}
		},
	}.drivers(), map[string]func(isoCtx){
		"GET " + note + "list": isoList(note+"list", func(c isoCtx) []map[string]string {
			return withSync([]map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"q": c.w.mark},
				{"limit": "1"}})
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
			return withSync([]map[string]string{{}, {"projectId": c.w.pick(c.s.rnd, "project")}, {"q": c.w.mark},
				{"ownerHint": c.w.mark}, {"status": "OPEN"},
				{"sort": "dueDate", "sortDir": "asc"}, {"includeArchived": "true"}, {"limit": "1"}})
		}, func(c isoCtx) []map[string]string {
			return []map[string]string{{"projectId": c.x.pick(c.s.rnd, "project")}, {"q": c.x.mark},
				{"ownerHint": c.x.mark}}
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
				c.notFound(c.key("POST", base+"attach-project", map[string]any{"actionItemId": item, "projectId": prj},
					item))
				return
			}
			prj = c.x.pick(c.s.rnd, "project")
			c.notFound(c.key("POST", base+"attach-project", map[string]any{"actionItemId": item, "projectId": prj},
				prj))
		},
		"POST " + base + "update": isoByID("POST", base+"update", "action-item", "actionItemId",
			func(c isoCtx) map[string]any {
				b := map[string]any{"title": c.s.text(c.w), "ownerHint": "team " + c.w.mark}
				if c.s.rnd.IntN(3) == 0 {
					b["status"] = oneOf(c, "IN_PROGRESS", "OPEN", "DONE")
				}
				return b
			}),
		"POST " + base + "archive": isoByID("POST", base+"archive", "action-item", "actionItemId", nil),
		"POST " + base + "restore": isoByID("POST", base+"restore", "action-item", "actionItemId", nil),
		"POST " + base + "delete": isoDelete(base, "action-item", "actionItemId", false,
			func(c isoCtx) map[string]any {
				return map[string]any{"title": c.s.text(c.w)}
			}),
		"POST " + base + "batch": isoBatch(base+"batch", "action-item", "actionItemId",
			func(c isoCtx) []map[string]any {
				return []map[string]any{
					{"op": "create", "title": c.s.text(c.w), "projectId": c.w.pick(c.s.rnd, "project")},
					{"op": "update", "actionItemId": c.w.pick(c.s.rnd, "action-item"), "title": c.s.text(c.w)},
					{"op": "attach-project", "actionItemId": c.w.pick(c.s.rnd, "action-item"),
						"projectId": c.w.pick(c.s.rnd, "project")},
					{"op": oneOf(c, "archive", "restore"), "actionItemId": c.w.pick(c.s.rnd, "action-item")},
				}
			}),
		"POST " + base + "{actionItemId}/log": func(c isoCtx) {
			body := map[string]any{"kind": oneOf(c, "NOTE", "PROGRESS", "BLOCKER", "EVIDENCE"),
				"message": c.s.text(c.w)}
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
			c.own(c.get(base+c.w.pick(c.s.rnd, "action-item")+"/logs",
				oneOf(c, map[string]string{}, map[string]string{"kind": "NOTE"})))
		},
	}
}

// withSync adds a mirror's queries (updatedSince, sort=updatedAt) to a
// list's own queries: a walk shows nothing of another workspace either.
func withSync(qs []map[string]string) []map[string]string {
	return append(qs, map[string]string{"updatedSince": "2000-01-01T00:00:00Z"}, map[string]string{"sort": "updatedAt"},
		map[string]string{"sort": "updatedAt", "updatedSince": "2000-01-01"})
}
