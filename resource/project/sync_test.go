package project_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestProjectsListByUpdate: the projects' walk by updatedAt (a list read by
// storekit.List, its cursor made by api.PageSorted) goes oldest change
// first, a changed project moves to the end, and updatedSince keeps the
// projects changed at or after it.
func TestProjectsListByUpdate(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, a.CreateProject(t, map[string]any{"name": fmt.Sprint("p", i)})["id"].(string))
	}
	up := a.Created(t, apitest.ProjectBase+"update", map[string]any{"id": ids[0], "name": "changed"})
	want := []string{ids[1], ids[2], ids[0]}
	var got []string
	apitest.Eventually(t, 10*time.Second, "the walk sees every project", func() bool {
		got = nil
		cursor := ""
		for {
			r := a.Get(t, apitest.ProjectBase+"list", map[string]string{"sort": "updatedAt", "limit": "1",
				"cursor": cursor})
			if r.Status != 200 {
				t.Fatalf("list: %d %s", r.Status, r.Raw)
			}
			got = append(got, r.IDs()...)
			if cursor, _ = r.Data()["nextCursor"].(string); cursor == "" {
				return slices.Equal(got, want)
			}
		}
	})
	since := a.Get(t, apitest.ProjectBase+"list", map[string]string{"updatedSince": up["updatedAt"].(string)}).IDs()
	if !slices.Equal(since, ids[:1]) {
		t.Errorf("updatedSince the last change: %v, want %v", since, ids[:1])
	}
	for _, q := range []map[string]string{{"sort": "updatedAt"}, {"updatedSince": "2000-01-01"}} {
		if ids := b.Get(t, apitest.ProjectBase+"list", q).IDs(); len(ids) != 0 {
			t.Errorf("B lists A's projects with %v: %v", q, ids)
		}
	}
}
