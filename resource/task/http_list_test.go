package task_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestTaskListFilters gives each filter a case whose answer differs from the
// unfiltered list, so ignoring the filter fails; time bounds are probed at
// their edges (After includes its instant, Before excludes it).
func TestTaskListFilters(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	alpha, beta := tn.TaskProject(t), tn.TaskProject(t)
	mk := func(body map[string]any) (string, string) {
		v := tn.CreateTask(t, body)
		return v["id"].(string), v["createdAt"].(string)
	}
	first, firstAt := mk(map[string]any{"projectId": alpha, "title": "Order 100% cotton_rags",
		"dueDate": "2026-03-01T00:00:00Z", "assigneeId": tn.UserID})
	second, secondAt := mk(map[string]any{"projectId": alpha, "title": "Calibrate press",
		"dueDate": "2026-03-02T00:00:00Z"})
	third, thirdAt := mk(map[string]any{"projectId": beta, "title": "Write the cotton report"})
	archived, _ := mk(map[string]any{"projectId": beta, "title": "Old cotton idea", "dueDate": "2026-03-01T12:00:00Z"})
	tn.Do(t, "PATCH", apitest.TaskBase+"update", map[string]any{"taskId": second, "status": "IN_PROGRESS"})
	tn.Do(t, "POST", apitest.TaskBase+"archive", map[string]any{"taskId": archived})
	if firstAt >= secondAt || secondAt >= thirdAt {
		t.Fatalf("creation times do not increase: %s %s %s", firstAt, secondAt, thirdAt)
	}
	justAfter := func(ts string) string {
		tm, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Add(time.Microsecond).Format(time.RFC3339Nano)
	}

	all := []string{third, second, first}
	cases := []struct {
		query map[string]string
		want  []string
	}{
		{map[string]string{}, all},
		{map[string]string{"projectId": alpha}, []string{second, first}},
		{map[string]string{"projectId": beta}, []string{third}},
		{map[string]string{"status": "IN_PROGRESS"}, []string{second}},
		{map[string]string{"status": "TODO"}, []string{third, first}},
		{map[string]string{"status": "DONE"}, nil},
		{map[string]string{"assigneeId": tn.UserID}, []string{first}},
		{map[string]string{"q": "COTTON"}, []string{third, first}},
		{map[string]string{"q": "100%"}, []string{first}},
		{map[string]string{"q": "n_r"}, []string{first}},
		{map[string]string{"dueAfter": "2026-03-01T00:00:00Z"}, []string{second, first}},
		{map[string]string{"dueAfter": "2026-03-01T00:00:00.000001Z"}, []string{second}},
		{map[string]string{"dueAfter": "2026-03-02"}, []string{second}},
		{map[string]string{"dueBefore": "2026-03-02T00:00:00Z"}, []string{first}},
		{map[string]string{"dueBefore": "2026-03-01T00:00:00Z"}, nil},
		{map[string]string{"dueBefore": "2026-03-01T00:00:00.000001Z"}, []string{first}},
		{map[string]string{"dueAfter": "2026-02-28T23:00:00-01:00", "dueBefore": "2026-03-03"},
			[]string{second, first}},
		{map[string]string{"createdAfter": secondAt}, []string{third, second}},
		{map[string]string{"createdAfter": justAfter(secondAt)}, []string{third}},
		{map[string]string{"createdBefore": secondAt}, []string{first}},
		{map[string]string{"createdBefore": justAfter(secondAt)}, []string{second, first}},
		{map[string]string{"createdAfter": firstAt, "createdBefore": thirdAt}, []string{second, first}},
		{map[string]string{"includeArchived": "true"}, []string{archived, third, second, first}},
		{map[string]string{"includeArchived": "false"}, all},
		{map[string]string{"includeArchived": "true", "dueAfter": "2026-03-01T06:00:00Z", "dueBefore": "2026-03-02"},
			[]string{archived}},
		{map[string]string{"projectId": alpha, "status": "TODO", "assigneeId": tn.UserID, "q": "cotton"},
			[]string{first}},
		{map[string]string{"limit": "1"}, []string{third}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.query), func(t *testing.T) {
			r := tn.Get(t, apitest.TaskBase+"list", tc.query)
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			if got := r.IDs(); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTaskListRefusesBadParameters(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	for _, q := range []map[string]string{
		{"projectId": "nope"}, {"projectId": "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"}, {"status": "todo"}, {"status": "OPEN"},
		{"assigneeId": "bob"}, {"dueAfter": "yesterday"}, {"dueBefore": "2026-13-01"}, {"createdAfter": "1700000000"},
		{"createdBefore": "2026-03-01 10:00"}, {"includeArchived": "maybe"}, {"limit": "0"}, {"limit": "201"},
		{"limit": "ten"},
		{"cursor": "zzz"}, {"q": "a\x00b"}, {"q": "\xff"},
	} {
		for name := range q {
			t.Run(fmt.Sprint(q), func(t *testing.T) {
				r := tn.Get(t, apitest.TaskBase+"list", q)
				apitest.WantError(t, r, 400, "VALIDATION_FAILED")
				if got := r.ErrorDetails()["field"]; got != name {
					t.Errorf("details.field = %v, want %s", got, name)
				}
			})
		}
	}
	// A cursor of another list is refused, not misread as a task key.
	tn.CreateProject(t, map[string]any{"name": "first"})
	tn.CreateProject(t, map[string]any{"name": "second"})
	cur, ok := tn.Get(t, apitest.ProjectBase+"list", map[string]string{"limit": "1"}).Data()["nextCursor"].(string)
	if !ok {
		t.Fatal("no project cursor to try")
	}
	apitest.WantError(t, tn.Get(t, apitest.TaskBase+"list", map[string]string{"cursor": cur}),
		400, "VALIDATION_FAILED")
}

func TestTaskPagesSkipNothingWhileRowsArrive(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	var created []string
	for i := 0; i < 7; i++ {
		created = append(created, tn.CreateTask(t,
			map[string]any{"projectId": prj, "title": fmt.Sprintf("t%d", i)})["id"].(string))
	}
	order := apitest.PagesWhileRowsArrive(t, tn, apitest.TaskBase+"list",
		map[string]string{"limit": "2", "projectId": prj}, created, func(page int) {
			tn.CreateTask(t, map[string]any{"projectId": prj, "title": fmt.Sprintf("late%d", page)})
		})
	if len(order) != len(created) {
		t.Errorf("pages held %d tasks, want the %d that existed when paging began", len(order), len(created))
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)
	if !slices.Equal(order, newestFirst) {
		t.Errorf("pages are not newest first: %v", order)
	}
}
