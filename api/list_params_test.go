package api_test

import (
	"fmt"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestListsRefuseForeignCursorsAndBadPages holds every list to the
// page rules: a cursor minted by another list, a made-up cursor and a limit
// outside 1..200 are 400 VALIDATION_FAILED naming the parameter.
func TestListsRefuseForeignCursorsAndBadPages(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "one"})["id"].(string)
	tn.CreateProject(t, map[string]any{"name": "two"})
	for i := 0; i < 2; i++ {
		tn.CreateTask(t, map[string]any{"projectId": prj, "title": fmt.Sprint("t", i)})
		tn.CreateRisk(t, map[string]any{"projectId": prj, "title": fmt.Sprint("r", i)})
		tn.Do(t, "POST", apitest.NoteBase+"create", map[string]any{"projectId": prj, "body": fmt.Sprint("n", i)})
	}
	lists := []string{apitest.ProjectBase + "list", apitest.TaskBase + "list", apitest.RiskBase + "list",
		apitest.NoteBase + "list"}
	cursors := map[string]string{}
	for _, l := range lists {
		cur, ok := tn.Get(t, l, map[string]string{"limit": "1"}).Data()["nextCursor"].(string)
		if !ok {
			t.Fatalf("%s gave no cursor with limit=1", l)
		}
		cursors[l] = cur
		// Its own cursor works.
		if r := tn.Get(t, l, map[string]string{"limit": "1", "cursor": cur}); r.Status != 200 || len(r.Items()) != 1 {
			t.Fatalf("%s with its own cursor: %d %s", l, r.Status, r.Raw)
		}
	}
	field := func(r *apitest.Response) any {
		d, _ := r.Body["error"].(map[string]any)["details"].(map[string]any)
		return d["field"]
	}
	for _, l := range lists {
		for _, other := range lists {
			if other == l {
				continue
			}
			r := tn.Get(t, l, map[string]string{"cursor": cursors[other]})
			apitest.WantError(t, r, 400, "VALIDATION_FAILED")
			if f := field(r); f != "cursor" {
				t.Errorf("%s with a cursor of %s: details.field %v", l, other, f)
			}
		}
		for _, q := range []map[string]string{{"cursor": "zzz"}, {"limit": "0"}, {"limit": "201"}, {"limit": "-1"}} {
			r := tn.Get(t, l, q)
			apitest.WantError(t, r, 400, "VALIDATION_FAILED")
			for name := range q {
				if f := field(r); f != name {
					t.Errorf("%s %v: details.field %v", l, q, f)
				}
			}
		}
	}
}
