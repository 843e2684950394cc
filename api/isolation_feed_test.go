package api_test

// The event feed's driver: a workspace reads its own events with each filter
// and its own cursor; with another workspace's cursor it is refused (400, the
// same as a cursor made up), and with another workspace's project it lists
// nothing. check holds every answer to the property: no other workspace's ids
// or words.
func init() {
	isoDrivers["GET "+isoFeed] = isoFeedDriver
}

const isoFeed = "/openapi/v1/events"

func isoFeedDriver(c isoCtx) {
	if !c.foreign {
		q := oneOf(c, map[string]string{}, map[string]string{"limit": "1"},
			map[string]string{"types": "task.created,project.created"},
			map[string]string{"projectId": c.w.pick(c.s.rnd, "project")})
		if cur := c.s.cursors[isoFeed][c.w.i]; cur != "" && c.s.rnd.IntN(2) == 0 {
			q = map[string]string{"after": cur, "limit": "5"}
		}
		c.own(c.get(isoFeed, q))
		return
	}
	if cur := c.s.cursors[isoFeed][c.x.i]; cur != "" && c.s.rnd.IntN(2) == 0 {
		c.refused(c.get(isoFeed, map[string]string{"after": cur}), 400, "VALIDATION_FAILED")
		return
	}
	c.empty(c.get(isoFeed, map[string]string{"projectId": c.x.pick(c.s.rnd, "project")}))
}
