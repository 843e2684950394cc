package project_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzProjectCreate(f *testing.F) {
	seeds := append([]string{
		`{"name":"Line 4"}`,
		`{"name":"x","ragStatus":"RED","startDate":"2026-01-01","targetDate":"2025-01-01"}`,
		`{"name":"x","startDate":"2026-13-45"}`,
		`{"name":"x","startDate":"0000-01-01"}`, // PostgreSQL's 22008 once reached the client as a 500
		`{"name":"a\ud800b"}`, "{\"name\":\"a\xffb\"}",
		`{"name":"x","ownerId":"not-a-uuid","memberIds":["00000000-0000-0000-0000-000000000000"]}`,
		`{"name":"x","memberIds":null,"description":null}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ProjectBase+"create", seeds, nil)
}

func FuzzProjectMemberAdd(f *testing.F) {
	seeds := append([]string{
		`{"projectId":"$ID","userId":"00000000-0000-0000-0000-000000000000"}`,
		`{"projectId":"$ID","userId":"00000000-0000-0000-0000-000000000000","role":"OWNER"}`,
		`{"projectId":"$ID","userId":"not-a-uuid","role":"KING"}`,
		`{"projectId":"prj_00000000000000000000000000","userId":null}`,
		`{"projectId":"$ID","userId":["x"],"role":7}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ProjectBase+"member/add", seeds,
		func(t testing.TB, tn *apitest.Tenant) string {
			return tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
		})
}

func FuzzProjectUpdate(f *testing.F) {
	seeds := append([]string{
		`{"id":"$ID","name":"renamed"}`,
		`{"id":"$ID","ragStatus":null}`,
		`{"id":"$ID","description":null,"ownerId":null,"startDate":null}`,
		`{"id":"$ID","targetDate":"2020-01-01","startDate":"2030-01-01"}`,
		`{"id":"prj_00000000000000000000000000"}`,
		`{"id":"$ID","name":""}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ProjectBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		r := tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"})
		return r.Str("id")
	})
}
