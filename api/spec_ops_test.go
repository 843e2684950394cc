package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// specActionItemAndRRCAOperations are the 26 operations of docs/decisions/action-items.md and rrca.md
// (action items and RRCA), each with the test that drives it through the app
// (every answer validated against the document) and whether it takes a body.
var specActionItemAndRRCAOperations = []struct {
	method, path string
	body         bool
	test         string
}{
	{"GET", "/openapi/v1/resource/action-item/list", false, "TestActionItemListFiltersAndSorts"},
	{"POST", "/openapi/v1/resource/action-item/create", true, "TestActionItemLifecycleAndLogs"},
	{"POST", "/openapi/v1/resource/action-item/attach-project", true, "TestActionItemLifecycleAndLogs"},
	{"POST", "/openapi/v1/resource/action-item/update", true, "TestActionItemTransitions"},
	{"POST", "/openapi/v1/resource/action-item/archive", true, "TestActionItemLifecycleAndLogs"},
	{"POST", "/openapi/v1/resource/action-item/restore", true, "TestActionItemLifecycleAndLogs"},
	{"POST", "/openapi/v1/resource/action-item/delete", true, "TestActionItemLifecycleAndLogs"},
	{"POST", "/openapi/v1/resource/action-item/batch", true, "TestActionItemBatch"},
	{"POST", "/openapi/v1/resource/action-item/{actionItemId}/log", true, "TestExecutionLogKindsAndLimit"},
	{"GET", "/openapi/v1/resource/action-item/{actionItemId}/logs", false, "TestExecutionLogKindsAndLimit"},
	{"GET", "/openapi/v1/resource/rrca", false, "TestRRCAListFiltersIsolationAndScopes"},
	{"POST", "/openapi/v1/resource/rrca", true, "TestRRCAFromARisk"},
	{"GET", "/openapi/v1/resource/rrca/{rrcaId}", false, "TestRRCAPhasesAndGates"},
	{"POST", "/openapi/v1/resource/rrca/{rrcaId}/advance", false, "TestRRCAPhasesAndGates"},
	{"POST", "/openapi/v1/resource/rrca/{rrcaId}/archive", false, "TestRRCAListFiltersIsolationAndScopes"},
	{"GET", "/openapi/v1/resource/rrca/{rrcaId}/nodes", false, "TestRRCANodeTreeDeletesExactlyTheSubtree"},
	{"POST", "/openapi/v1/resource/rrca/{rrcaId}/nodes", true, "TestRRCANodeTreeDeletesExactlyTheSubtree"},
	{"DELETE", "/openapi/v1/resource/rrca/{rrcaId}/nodes/{nodeId}", false, "TestRRCANodeTreeDeletesExactlyTheSubtree"},
	{"POST", "/openapi/v1/resource/rrca/{rrcaId}/corrective-actions", true, "TestRRCAPhasesAndGates"},
	{"GET", "/openapi/v1/resource/rrca/{rrcaId}/corrective-actions", false, "TestRRCAPhasesAndGates"},
	{"GET", "/openapi/v1/resource/rrca/{rrcaId}/similar", false, "TestSimilarFindsPlantedNearDuplicates"},
	{
		"POST",
		"/openapi/v1/resource/rrca/{rrcaId}/5why/suggest",
		false,
		"TestFiveWhySuggestionsFromSimilarAnalysesAndRisks",
	},
	{"GET", "/openapi/v1/resource/rrca/{rrcaId}/look-across", false, "TestLookAcrossSuggestApplyAndReject"},
	{"POST", "/openapi/v1/resource/rrca/{rrcaId}/look-across/suggest", false, "TestLookAcrossSuggestApplyAndReject"},
	{
		"POST",
		"/openapi/v1/resource/rrca/{rrcaId}/look-across/{suggestionId}/apply",
		true,
		"TestLookAcrossSuggestApplyAndReject",
	},
	{
		"POST",
		"/openapi/v1/resource/rrca/{rrcaId}/look-across/{suggestionId}/reject",
		true,
		"TestLookAcrossSuggestApplyAndReject",
	},
}

// TestSpecActionItemAndRRCAOperationsAreDescribed: each of the 26 operations is
// in the document with a success response schema, and a request body schema
// where it takes one.
func TestSpecActionItemAndRRCAOperationsAreDescribed(t *testing.T) {
	t.Parallel()
	if n := len(specActionItemAndRRCAOperations); n != 26 {
		t.Fatalf("%d operations listed, the spec has 26", n)
	}
	doc := apitest.New(t).Server.Document()
	for _, op := range specActionItemAndRRCAOperations {
		item := doc.Paths.Value(op.path)
		if item == nil || item.GetOperation(op.method) == nil {
			t.Errorf("%s %s (driven by %s) is not in the document", op.method, op.path, op.test)
			continue
		}
		o := item.GetOperation(op.method)
		ok := false
		for code, r := range o.Responses.Map() {
			if len(code) == 3 && code[0] == '2' && r.Value != nil && r.Value.Content.Get("application/json") != nil &&
				r.Value.Content.Get("application/json").Schema != nil {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s %s has no success response schema", op.method, op.path)
		}
		if op.body &&
			(o.RequestBody == nil || o.RequestBody.Value == nil || o.RequestBody.Value.Content.Get("application/json") == nil) {
			t.Errorf("%s %s has no request body schema", op.method, op.path)
		}
	}
}
