package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// fuzzBody drives one endpoint of the real app with arbitrary request bodies:
// whatever arrives, the answer is a documented status below 500 with the
// envelope (apitest validates it against the document), and nothing panics.
// prepare may create what the seeds refer to and returns replacements for the
// placeholder "$ID" in seeds.
// pathOf, when given, supplies the path after prepare ran (for paths with ids).
func fuzzBody(f *testing.F, method, path string, seeds []string, prepare func(t testing.TB, tn *apitest.Tenant) string, pathOf ...func() string) {
	// Unlimited: the rate limit runs before decoding, so past the first minute's
	// allowance every input would test the 429 path and no decoder.
	env := apitest.New(f, func(d *apitest.Config) { d.RateLimitPerMinute = 1_000_000_000 })
	tn := env.NewTenant(f)
	id := ""
	if prepare != nil {
		id = prepare(f, tn)
	}
	for _, s := range seeds {
		f.Add([]byte(replaceID(s, id)))
	}
	if len(pathOf) > 0 {
		path = pathOf[0]()
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := tn.Do(t, method, path, body)
		if r.Status >= 500 {
			t.Fatalf("%s %s answered %d for %q: %s", method, path, r.Status, body, r.Raw)
		}
	})
}

func replaceID(s, id string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if i+3 <= len(s) && s[i:i+3] == "$ID" {
			out = append(out, id...)
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

var commonSeeds = []string{
	``, `{}`, `null`, `[]`, `"x"`, `{"a":1}`, `{"name":`, "{\"name\":\"\x00\"}", `{"name":"` + "\u202e" + `"}`,
	`{"name":"x"}{}`, `{"id":null}`, `{"name":1e309}`, `{"name":["x"]}`,
}

func FuzzProjectCreate(f *testing.F) {
	seeds := append([]string{
		`{"name":"Line 4"}`,
		`{"name":"x","ragStatus":"RED","startDate":"2026-01-01","targetDate":"2025-01-01"}`,
		`{"name":"x","startDate":"2026-13-45"}`,
		`{"name":"x","startDate":"0000-01-01"}`, // PostgreSQL's 22008 once reached the client as a 500
		`{"name":"a\ud800b"}`, "{\"name\":\"a\xffb\"}",
		`{"name":"x","ownerId":"not-a-uuid","memberIds":["00000000-0000-0000-0000-000000000000"]}`,
		`{"name":"x","memberIds":null,"description":null}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", projectBase+"create", seeds, nil)
}

func FuzzProjectMemberAdd(f *testing.F) {
	seeds := append([]string{
		`{"projectId":"$ID","userId":"00000000-0000-0000-0000-000000000000"}`,
		`{"projectId":"$ID","userId":"00000000-0000-0000-0000-000000000000","role":"OWNER"}`,
		`{"projectId":"$ID","userId":"not-a-uuid","role":"KING"}`,
		`{"projectId":"prj_00000000000000000000000000","userId":null}`,
		`{"projectId":"$ID","userId":["x"],"role":7}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", projectBase+"member/add", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
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
	}, commonSeeds...)
	fuzzBody(f, "POST", projectBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		r := tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"})
		return r.Str("id")
	})
}

func FuzzRiskCreate(f *testing.F) {
	seeds := append([]string{
		`{"projectId":"$ID","title":"Supplier delay","severity":"HIGH"}`, `{"projectId":"$ID","title":"x","severity":"high"}`,
		`{"projectId":"$ID","title":"x","ownerId":"nobody"}`, `{"projectId":null,"title":"x"}`, `{"projectId":"$ID","title":"x","status":"OPEN"}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", riskBase+"create", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
	})
}

func FuzzRiskUpdate(f *testing.F) {
	seeds := append([]string{
		`{"riskId":"$ID","status":"RESOLVED"}`, `{"riskId":"$ID","status":"OPEN"}`, `{"riskId":"$ID","severity":null}`,
		`{"riskId":"$ID","ownerId":null,"description":null}`, `{"riskId":"rsk_00000000000000000000000000","status":"OPEN"}`,
	}, commonSeeds...)
	fuzzBody(f, "PATCH", riskBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		p := tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
		return tn.Do(t, "POST", riskBase+"create", map[string]any{"projectId": p, "title": "fuzzed"}).Str("id")
	})
}

func FuzzNoteCreate(f *testing.F) {
	seeds := append([]string{`{"projectId":"$ID","body":"hello"}`, `{"projectId":"$ID","body":""}`, `{"projectId":"$ID"}`}, commonSeeds...)
	fuzzBody(f, "POST", noteBase+"create", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
	})
}

func FuzzNoteUpdate(f *testing.F) {
	seeds := append([]string{
		`{"noteId":"$ID","body":"edited"}`, `{"noteId":"$ID","body":""}`, `{"noteId":"$ID","body":null}`, `{"noteId":"$ID"}`,
		`{"noteId":"not_00000000000000000000000000","body":"x"}`, `{"noteId":"$ID","body":"x","projectId":"$ID"}`,
	}, commonSeeds...)
	fuzzBody(f, "PATCH", noteBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		p := tn.Do(t, "POST", projectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
		return tn.Do(t, "POST", noteBase+"create", map[string]any{"projectId": p, "body": "fuzzed"}).Str("id")
	})
}
