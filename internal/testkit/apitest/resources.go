package apitest

import "testing"

// The resources' route bases: an operation's path is its base and its name
// (TaskBase + "create"); an analysis's routes are below RRCABase + "/" + id.
const (
	ProjectBase    = "/openapi/v1/resource/project/"
	TaskBase       = "/openapi/v1/resource/task/"
	RiskBase       = "/openapi/v1/resource/risk/"
	NoteBase       = "/openapi/v1/resource/note/"
	ActionItemBase = "/openapi/v1/resource/action-item/"
	RRCABase       = "/openapi/v1/resource/rrca"
	SearchPath     = "/openapi/v1/resource/search"
)

// CreateProject creates a project from body and returns its view; anything
// but 201 fails t.
func (tn *Tenant) CreateProject(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	return tn.Created(t, ProjectBase+"create", body)
}

// TaskProject creates a project named after the test and returns its id, for
// tests that need somewhere to put tasks.
func (tn *Tenant) TaskProject(t testing.TB) string {
	t.Helper()
	return tn.CreateProject(t, map[string]any{"name": "tasks of " + t.Name()})["id"].(string)
}

// CreateTask creates a task from body and returns its view.
func (tn *Tenant) CreateTask(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	return tn.Created(t, TaskBase+"create", body)
}

// CreateRisk creates a risk from body and returns its view.
func (tn *Tenant) CreateRisk(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	return tn.Created(t, RiskBase+"create", body)
}

// CreateActionItem creates an action item from body and returns its view.
func (tn *Tenant) CreateActionItem(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	return tn.Created(t, ActionItemBase+"create", body)
}

// CreateRRCA creates a root-cause analysis from body and returns its id.
func (tn *Tenant) CreateRRCA(t testing.TB, body map[string]any) string {
	t.Helper()
	return tn.Created(t, RRCABase, body)["id"].(string)
}

// AddNode adds a node of kind with text to the analysis rrcaID, under parent
// unless it is "", and returns the node's id; anything but 201 fails t.
func (tn *Tenant) AddNode(t testing.TB, rrcaID, kind, text, parent string) string {
	t.Helper()
	body := map[string]any{"kind": kind, "text": text}
	if parent != "" {
		body["parentId"] = parent
	}
	r := tn.Do(t, "POST", RRCABase+"/"+rrcaID+"/nodes", body)
	if r.Status != 201 {
		t.Fatalf("add node: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

// Advance asks to move the analysis rrcaID to its next phase and returns the
// answer, whatever it is.
func (tn *Tenant) Advance(t testing.TB, rrcaID string) *Response {
	t.Helper()
	return tn.Do(t, "POST", RRCABase+"/"+rrcaID+"/advance", nil)
}
