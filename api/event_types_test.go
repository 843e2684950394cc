package api_test

import (
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// webhookTableEvents is the event table of docs/webhooks.md.
var webhookTableEvents = []string{
	"note.created", "note.updated", "note.deleted",
	"action-item.created", "action-item.updated", "action-item.deleted",
	"task.created", "task.status_changed", "task.assigned", "task.deleted",
	"risk.created", "risk.opened", "risk.resolved", "risk.deleted",
	"project.created", "project.member_added", "project.member_removed",
	"webhook.test",
}

// specEventTypes is the event table of docs/webhooks.md plus the <resource>.<verb> events
// of the other changes of projects, tasks, risks and notes (DESIGN.md section 6).
var specEventTypes = append(slices.Clone(webhookTableEvents),
	"project.updated", "project.archived", "project.restored", "project.deleted",
	"task.updated", "task.archived", "task.restored",
	"risk.updated", "risk.archived", "risk.restored",
)

// TestEventTypesCoverWhatIsEmitted checks GET /openapi/v1/webhooks/event-types
// against the spec's names and against what the resources really write: every
// event a round of changes records is listed, and its data validates against
// the payload schema the document gives for that type (x-webhooks).
func TestEventTypesCoverWhatIsEmitted(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	doc := env.Server.Document()
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)

	listed := map[string]string{}
	for _, it := range env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/webhooks/event-types"}).Items() {
		listed[it["type"].(string)] = it["schema"].(string)
	}
	for _, name := range specEventTypes {
		if _, ok := listed[name]; !ok {
			t.Errorf("event-types lacks %s", name)
		}
	}
	for name, schema := range listed {
		if doc.Components.Schemas[schema] == nil {
			t.Errorf("%s: payload schema %q is not in components.schemas", name, schema)
		}
		if _, ok := hooks[name]; !ok {
			t.Errorf("%s is not described in the document's x-webhooks", name)
		}
	}

	// A round of changes touching every project, task, risk and note event.
	do := func(method, path string, body map[string]any) *apitest.Response {
		t.Helper()
		r := tn.Do(t, method, path, body)
		if r.Status != 201 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
		}
		return r
	}
	prj := tn.CreateProject(t, map[string]any{"name": "Events"})["id"].(string)
	do("POST", apitest.ProjectBase+"update", map[string]any{"id": prj, "ragStatus": "RED"})
	do("POST", apitest.ProjectBase+"member/add", map[string]any{"projectId": prj, "userId": tn.UserID})
	do("POST", apitest.ProjectBase+"member/remove", map[string]any{"projectId": prj, "userId": tn.UserID})
	tsk := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "T", "assigneeId": tn.UserID})["id"].(string)
	do("PATCH", apitest.TaskBase+"update", map[string]any{"taskId": tsk, "status": "IN_PROGRESS", "assigneeId": nil})
	do("POST", apitest.TaskBase+"archive", map[string]any{"taskId": tsk})
	do("POST", apitest.TaskBase+"restore", map[string]any{"taskId": tsk})
	rsk := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "R"})["id"].(string)
	do("PATCH", apitest.RiskBase+"update", map[string]any{"riskId": rsk, "status": "RESOLVED"})
	do("PATCH", apitest.RiskBase+"update", map[string]any{"riskId": rsk, "status": "OPEN"})
	do("POST", apitest.RiskBase+"archive", map[string]any{"riskId": rsk})
	do("POST", apitest.RiskBase+"restore", map[string]any{"riskId": rsk})
	note := do("POST", apitest.NoteBase+"create", map[string]any{"projectId": prj, "body": "n"}).Str("id")
	do("POST", apitest.NoteBase+"update", map[string]any{"noteId": note, "body": "n2"})
	do("POST", apitest.NoteBase+"create", map[string]any{"projectId": prj, "body": "kept until the project goes"})
	do("POST", apitest.NoteBase+"delete", map[string]any{"noteId": note})
	do("POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	do("POST", apitest.ProjectBase+"restore", map[string]any{"id": prj})
	do("POST", apitest.ProjectBase+"archive", map[string]any{"id": prj})
	do("POST", apitest.ProjectBase+"delete", map[string]any{"id": prj})

	seen := map[string]bool{}
	for _, e := range tn.Events(t) {
		seen[e.Type] = true
		schema, ok := listed[e.Type]
		if !ok {
			t.Errorf("emitted %s is not listed in event-types", e.Type)
			continue
		}
		ref := doc.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			continue // reported above
		}
		if err := ref.Value.VisitJSON(e.Data); err != nil {
			t.Errorf("%s data does not match schema %s: %v\n%v", e.Type, schema, err, e.Data)
		}
	}
	for _, name := range specEventTypes {
		switch name[:4] {
		case "proj", "task", "risk", "note":
			if !seen[name] {
				t.Errorf("the round of changes emitted no %s", name)
			}
		}
	}
}
