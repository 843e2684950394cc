package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzActionItemCreate(f *testing.F) {
	seeds := append([]string{
		`{"title":"Add torque check","ownerHint":"Night shift","dueDate":"2026-12-01T09:00:00Z"}`,
		`{"title":"x","dueDate":"tomorrow"}`, `{"title":"x","dueDate":"9999-12-31T23:00:00-05:00"}`, // once a 500
		`{"title":"x","projectId":"prj_nope"}`, `{"title":"x","projectId":null,"description":null}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", aiBase+"create", seeds, nil)
}

func FuzzActionItemUpdate(f *testing.F) {
	seeds := append([]string{
		`{"actionItemId":"$ID","status":"DONE"}`, `{"actionItemId":"$ID","status":"OPEN"}`, `{"actionItemId":"$ID","title":null}`,
		`{"actionItemId":"$ID","dueDate":null,"ownerHint":null}`, `{"actionItemId":"$ID","status":"done"}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", aiBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", aiBase+"create", map[string]any{"title": "fuzzed"}).Str("id")
	})
}

func FuzzActionItemBatch(f *testing.F) {
	seeds := append([]string{
		`{"operations":[{"op":"create","title":"a"},{"op":"update","actionItemId":"$ID","status":"DONE"}]}`,
		`{"atomic":true,"operations":[{"op":"delete","actionItemId":"$ID"},{"op":"restore","actionItemId":"$ID"}]}`,
		`{"operations":[]}`, `{"operations":[{"op":"attach-project"}]}`, `{"operations":[{}]}`, `{"operations":null}`,
	}, commonSeeds...)
	fuzzBody(f, "POST", aiBase+"batch", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", aiBase+"create", map[string]any{"title": "fuzzed"}).Str("id")
	})
}

func FuzzRRCANode(f *testing.F) {
	seeds := append([]string{
		`{"kind":"WHY","text":"seal leaks"}`, `{"kind":"ROOT_CAUSE","text":"x","parentId":"nod_00000000000000000000000000"}`,
		`{"kind":"WHY_SUGGESTION","text":"x"}`, `{"kind":"why","text":""}`, `{"kind":"EVIDENCE","text":"x","parentId":null}`,
	}, commonSeeds...)
	var path string
	fuzzBody(f, "POST", "", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		path = rrcaBase + "/" + tn.Do(t, "POST", rrcaBase, map[string]any{"title": "fuzzed"}).Str("id") + "/nodes"
		return ""
	}, func() string { return path })
}
