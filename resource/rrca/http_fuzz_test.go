package rrca_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzRRCANode(f *testing.F) {
	seeds := append([]string{
		`{"kind":"WHY","text":"seal leaks"}`,
		`{"kind":"ROOT_CAUSE","text":"x","parentId":"nod_00000000000000000000000000"}`,
		`{"kind":"WHY_SUGGESTION","text":"x"}`, `{"kind":"why","text":""}`,
		`{"kind":"EVIDENCE","text":"x","parentId":null}`,
	}, apitest.CommonSeeds...)
	var path string
	apitest.FuzzBody(f, "POST", "", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		path = apitest.RRCABase + "/" + tn.Do(t, "POST", apitest.RRCABase,
			map[string]any{"title": "fuzzed"}).Str("id") + "/nodes"
		return ""
	}, func() string { return path })
}
