package api_test

import (
	"testing"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestEventPayloadsMatchTheDocument records events of every resource through
// the API and holds each one's data to the schema the document's x-webhooks
// names for its type, so a webhook receiver can rely on the description.
func TestEventPayloadsMatchTheDocument(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	prj := tn.CreateProject(t, map[string]any{"name": "P"})["id"].(string)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "T"})["id"].(string)
	tn.Do(t, "POST", apitest.TaskBase+"update", map[string]any{"taskId": task, "status": "IN_PROGRESS"})
	tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "R"})
	ai := tn.CreateActionItem(t, map[string]any{"title": "A"})["id"].(string)
	tn.Do(t, "POST", apitest.ActionItemBase+"update", map[string]any{"actionItemId": ai, "status": "DONE"})
	tn.Do(t, "POST", apitest.ActionItemBase+ai+"/log", map[string]any{"kind": "NOTE", "message": "m"})
	rca := tn.CreateRRCA(t, map[string]any{"title": "X", "projectId": prj})
	tn.Advance(t, rca)
	root := tn.AddNode(t, rca, "ROOT_CAUSE", "r", "")
	tn.Do(t, "POST", apitest.RRCABase+"/"+rca+"/corrective-actions", map[string]any{"nodeId": root, "title": "c"})
	tn.Do(t, "POST", apitest.ActionItemBase+"archive", map[string]any{"actionItemId": ai})
	tn.Do(t, "POST", apitest.ActionItemBase+"delete", map[string]any{"actionItemId": ai})
	if r := tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj}); r.Status != 201 {
		t.Fatalf("archive project: %s", r.Raw)
	}

	doc := env.Server.Document()
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	events := tn.Events(t)
	if len(events) < 10 {
		t.Fatalf("only %d events recorded", len(events))
	}
	seen := map[string]bool{}
	for _, e := range events {
		ref := api.WebhookPayloadSchema(doc, e.Type)
		if ref == "" {
			t.Errorf("event type %s is not in x-webhooks", e.Type)
			continue
		}
		schema := doc.Components.Schemas[ref]
		if schema == nil || schema.Value == nil {
			t.Errorf("%s: %s does not resolve", e.Type, ref)
			continue
		}
		if err := schema.Value.VisitJSON(map[string]any(e.Data)); err != nil {
			t.Errorf("%s payload %v does not match %s: %v", e.Type, e.Data, ref, err)
		}
		seen[e.Type] = true
	}
	t.Logf("%d event types checked against the document: %v", len(seen), seen)
	// Every event type of the spec's table has its payload described.
	for _, typ := range webhookTableEvents {
		if _, ok := hooks[typ]; !ok {
			t.Errorf("x-webhooks lacks %s", typ)
		}
	}
}
