package risk_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func FuzzRiskCreate(f *testing.F) {
	seeds := append([]string{
		`{"projectId":"$ID","title":"Supplier delay","severity":"HIGH"}`,
		`{"projectId":"$ID","title":"x","severity":"high"}`,
		`{"projectId":"$ID","title":"x","ownerId":"nobody"}`, `{"projectId":null,"title":"x"}`,
		`{"projectId":"$ID","title":"x","status":"OPEN"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "POST", apitest.RiskBase+"create", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		return tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
	})
}

func FuzzRiskUpdate(f *testing.F) {
	seeds := append([]string{
		`{"riskId":"$ID","status":"RESOLVED"}`, `{"riskId":"$ID","status":"OPEN"}`, `{"riskId":"$ID","severity":null}`,
		`{"riskId":"$ID","ownerId":null,"description":null}`,
		`{"riskId":"rsk_00000000000000000000000000","status":"OPEN"}`,
	}, apitest.CommonSeeds...)
	apitest.FuzzBody(f, "PATCH", apitest.RiskBase+"update", seeds, func(t testing.TB, tn *apitest.Tenant) string {
		p := tn.Do(t, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzzed"}).Str("id")
		return tn.Do(t, "POST", apitest.RiskBase+"create", map[string]any{"projectId": p, "title": "fuzzed"}).Str("id")
	})
}
