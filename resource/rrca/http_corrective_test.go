package rrca_test

import (
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// correctiveAction adds a corrective action from a new ROOT_CAUSE under parent
// and returns its id, its node and its action item.
func correctiveAction(t *testing.T, tn *apitest.Tenant, rrcaID, parent string) (ca, node, item string) {
	t.Helper()
	node = tn.AddNode(t, rrcaID, "ROOT_CAUSE", "Seal not torqued", parent)
	r := tn.Do(t, "POST", apitest.RRCABase+"/"+rrcaID+"/corrective-actions",
		map[string]any{"nodeId": node, "title": "Add torque check"})
	if r.Status != 201 {
		t.Fatalf("corrective action: %d %s", r.Status, r.Raw)
	}
	return r.Str("correctiveAction.id"), node, r.Str("actionItem.id")
}

// correctiveRefs returns each corrective action's node and action item ids
// ("" for none), by corrective action id.
func correctiveRefs(t *testing.T, tn *apitest.Tenant, rrcaID string) map[string][2]string {
	t.Helper()
	r := tn.Get(t, apitest.RRCABase+"/"+rrcaID+"/corrective-actions", nil)
	if r.Status != 200 {
		t.Fatalf("corrective actions: %d %s", r.Status, r.Raw)
	}
	out := map[string][2]string{}
	for _, it := range r.Items() {
		node, _ := it["nodeId"].(string)
		item, _ := it["actionItemId"].(string)
		out[it["id"].(string)] = [2]string{node, item}
	}
	return out
}

// TestDeletingANodeSubtreeKeepsItsCorrectiveActions: deleting a node deletes its
// subtree; corrective actions from any node of it stay, pointing at no node
// (the store clears the reference: the foreign key cannot on Citus), and keep
// their action items. Others are untouched.
func TestDeletingANodeSubtreeKeepsItsCorrectiveActions(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateRRCA(t, map[string]any{"title": "Oil leak"})
	problem := tn.AddNode(t, id, "PROBLEM", "Oil on the floor", "")
	why := tn.AddNode(t, id, "WHY", "Seal leaks", problem)
	deep := tn.AddNode(t, id, "WHY", "Seal worn", why)
	caDeep, _, itemDeep := correctiveAction(t, tn, id, deep)
	caWhy, _, itemWhy := correctiveAction(t, tn, id, why)
	caKept, nodeKept, itemKept := correctiveAction(t, tn, id, problem)

	if r := tn.Do(t, "DELETE", apitest.RRCABase+"/"+id+"/nodes/"+why, nil); r.Status != 200 {
		t.Fatalf("delete node: %d %s", r.Status, r.Raw)
	}
	got := correctiveRefs(t, tn, id)
	want := map[string][2]string{caDeep: {"", itemDeep}, caWhy: {"", itemWhy}, caKept: {nodeKept, itemKept}}
	for ca, w := range want {
		if got[ca] != w {
			t.Errorf("corrective action %s: node and item %q, want %q", ca, got[ca], w)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d corrective actions after the delete, want 3", len(got))
	}
}

// TestDeletingAnActionItemKeepsItsCorrectiveAction: the corrective action stays
// without an item, and counts as open at the VERIFY gate.
func TestDeletingAnActionItemKeepsItsCorrectiveAction(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	id := tn.CreateRRCA(t, map[string]any{"title": "Oil leak"})
	ca, node, item := correctiveAction(t, tn, id, "")

	if r := tn.Do(t, "POST", apitest.ActionItemBase+"delete", map[string]any{"actionItemId": item}); r.Status != 201 {
		t.Fatalf("delete action item: %d %s", r.Status, r.Raw)
	}
	if got := correctiveRefs(t, tn, id)[ca]; got != [2]string{node, ""} {
		t.Errorf("corrective action after its item's delete: node and item %q", got)
	}
	// The batch endpoint deletes through the same store.
	ca2, node2, item2 := correctiveAction(t, tn, id, "")
	if r := tn.Do(t, "POST", apitest.ActionItemBase+"batch", map[string]any{"atomic": true,
		"operations": []map[string]any{{"op": "delete", "actionItemId": item2}}}); r.Status != 201 {
		t.Fatalf("batch delete: %d %s", r.Status, r.Raw)
	}
	if got := correctiveRefs(t, tn, id)[ca2]; got != [2]string{node2, ""} {
		t.Errorf("corrective action after a batch delete of its item: node and item %q", got)
	}
	for range 4 {
		tn.Advance(t, id)
	}
	r := tn.Advance(t, id)
	apitest.WantError(t, r, 409, "GATE_NOT_MET")
	open := r.Body["error"].(map[string]any)["details"].(map[string]any)["openActionItems"]
	if got, _ := open.([]any); len(got) != 2 || got[0] != ca || got[1] != ca2 {
		t.Errorf("open items at the VERIFY gate: %v, want the two corrective actions without items", open)
	}
}

// TestProjectDeleteClearsReferencesToItsActionItems: a project's delete removes
// its action items; corrective actions of analyses elsewhere that point at them
// lose the reference, and the project's own analyses go with theirs.
func TestProjectDeleteClearsReferencesToItsActionItems(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	home := tn.CreateProject(t, map[string]any{"name": "Home"})["id"].(string)
	other := tn.CreateProject(t, map[string]any{"name": "Other"})["id"].(string)
	id := tn.CreateRRCA(t, map[string]any{"title": "Oil leak", "projectId": home})
	ca, node, item := correctiveAction(t, tn, id, "")
	_, _, stays := correctiveAction(t, tn, id, "")
	if r := tn.Do(t, "POST", apitest.ActionItemBase+"attach-project",
		map[string]any{"actionItemId": item, "projectId": other}); r.Status != 201 {
		t.Fatalf("attach: %d %s", r.Status, r.Raw)
	}
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": other})
	if r := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": other}); r.Status != 201 {
		t.Fatalf("delete the item's project: %d %s", r.Status, r.Raw)
	}
	if got := correctiveRefs(t, tn, id)[ca]; got != [2]string{node, ""} {
		t.Errorf("corrective action after its item's project went: node and item %q", got)
	}

	// The home project's delete takes its analysis (nodes and corrective
	// actions in the same cascade) and the item that stayed.
	tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": home})
	if r := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": home}); r.Status != 201 {
		t.Fatalf("delete the analysis's project: %d %s", r.Status, r.Raw)
	}
	apitest.WantError(t, tn.Get(t, apitest.RRCABase+"/"+id, nil), 404, "NOT_FOUND")
	apitest.WantError(t, tn.Get(t, apitest.ActionItemBase+"detail", map[string]string{"id": stays}), 404, "NOT_FOUND")
}
