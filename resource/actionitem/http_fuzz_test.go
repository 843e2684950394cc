package actionitem_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzActionItemCreate(f *testing.F) {
	seeds := append([]string{
		`{"title":"Add torque check","ownerHint":"Night shift","dueDate":"2026-12-01T09:00:00Z"}`,
		`{"title":"x","dueDate":"tomorrow"}`, `{"title":"x","dueDate":"9999-12-31T23:00:00-05:00"}`, // once a 500
		`{"title":"x","projectId":"prj_nope"}`, `{"title":"x","projectId":null,"description":null}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ActionItemBase+"create", seeds, nil)
}

func FuzzActionItemUpdate(f *testing.F) {
	seeds := append([]string{
		`{"actionItemId":"$ID","status":"DONE"}`, `{"actionItemId":"$ID","status":"OPEN"}`,
		`{"actionItemId":"$ID","title":null}`,
		`{"actionItemId":"$ID","dueDate":null,"ownerHint":null}`, `{"actionItemId":"$ID","status":"done"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ActionItemBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", apitest.ActionItemBase+"create", map[string]any{"title": "fuzzed"}).Str("id")
	})
}

func FuzzActionItemBatch(f *testing.F) {
	seeds := append([]string{
		`{"operations":[{"op":"create","title":"a"},{"op":"update","actionItemId":"$ID","status":"DONE"}]}`,
		`{"atomic":true,"operations":[{"op":"delete","actionItemId":"$ID"},{"op":"restore","actionItemId":"$ID"}]}`,
		`{"operations":[]}`, `{"operations":[{"op":"attach-project"}]}`, `{"operations":[{}]}`, `{"operations":null}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.ActionItemBase+"batch", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", apitest.ActionItemBase+"create", map[string]any{"title": "fuzzed"}).Str("id")
	})
}
