package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// refName is the component a schema names, directly or as allOf's one member
// (a use with its own description or nullable).
func refName(s *openapi3.SchemaRef) string {
	if s.Ref == "" && s.Value != nil && len(s.Value.AllOf) == 1 {
		s = s.Value.AllOf[0]
	}
	return strings.TrimPrefix(s.Ref, "#/components/schemas/")
}

// TestDocumentIsShapedForGenerators checks what code generators need of the
// document: named envelopes and enums, the error-code enum, declared 4xx with
// their codes, scopes on an oauth2 scheme, a description everywhere.
func TestDocumentIsShapedForGenerators(t *testing.T) {
	t.Parallel()
	doc := apitest.Shared(t).Server.Document()
	schemas := doc.Components.Schemas
	prop := func(schema, field string) *openapi3.SchemaRef {
		t.Helper()
		s := schemas[schema]
		if s == nil || s.Value == nil || s.Value.Properties[field] == nil {
			t.Fatalf("no %s.%s", schema, field)
		}
		return s.Value.Properties[field]
	}
	op := func(id string) *openapi3.Operation {
		t.Helper()
		for _, item := range doc.Paths.Map() {
			for _, o := range item.Operations() {
				if o.OperationID == id {
					return o
				}
			}
		}
		t.Fatalf("no operation %s", id)
		return nil
	}

	t.Run("envelopes are named per data type", func(t *testing.T) {
		ok := op("getTask").Responses.Status(200).Value.Content["application/json"].Schema
		if ok.Ref != "#/components/schemas/TaskEnvelope" || refName(prop("TaskEnvelope", "data")) != "TaskView" {
			t.Errorf("getTask answers %q", ok.Ref)
		}
		listOK := op("listTasks").Responses.Status(200).Value
		if got := listOK.Content["application/json"].Schema.Ref; got != "#/components/schemas/TaskListEnvelope" {
			t.Errorf("listTasks answers %q", got)
		}
		for path, item := range doc.Paths.Map() {
			for method, o := range item.Operations() {
				for st, r := range o.Responses.Map() {
					if r.Value == nil || r.Value.Content["application/json"] == nil {
						continue
					}
					if s := r.Value.Content["application/json"].Schema; s.Ref == "" {
						t.Errorf("%s %s answers %s with an anonymous schema", method, path, st)
					}
				}
			}
		}
	})

	t.Run("one enum component per set of values", func(t *testing.T) {
		want := []string{"TODO", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE"}
		if s := schemas["TaskStatus"]; s == nil || !slices.Equal(anyStrings(s.Value.Enum), want) {
			t.Fatalf("TaskStatus = %v", s)
		}
		uses := map[string]*openapi3.SchemaRef{
			"TaskView.status": prop("TaskView", "status"), "TaskUpdateRequest.status": prop("TaskUpdateRequest", "status"),
			"TaskStatusChangedEvent.from": prop(
				"TaskStatusChangedEvent",
				"from",
			), "TaskBatchOperation.status": prop("TaskBatchOperation", "status"),
		}
		for _, p := range op("listTasks").Parameters {
			if p.Value.Name == "status" {
				uses["listTasks?status"] = p.Value.Schema
			}
		}
		for where, s := range uses {
			if refName(s) != "TaskStatus" {
				t.Errorf("%s is not TaskStatus: %+v", where, s)
			}
		}
		var walk func(where string, s *openapi3.SchemaRef)
		walk = func(where string, s *openapi3.SchemaRef) {
			if s == nil || s.Ref != "" || s.Value == nil {
				return
			}
			if len(s.Value.Enum) > 0 && strings.Contains(where, ".") {
				t.Errorf("%s has an inline enum %v", where, s.Value.Enum)
			}
			walk(where+"[]", s.Value.Items)
			for name, p := range s.Value.Properties {
				walk(where+"."+name, p)
			}
		}
		for name, s := range schemas {
			walk(name, s)
		}
	})

	t.Run("error codes are an enum of every code", func(t *testing.T) {
		if refName(prop("ErrorBody", "code")) != "ErrorCode" {
			t.Fatalf("ErrorBody.code is %+v", prop("ErrorBody", "code"))
		}
		codes := anyStrings(schemas["ErrorCode"].Value.Enum)
		for _, c := range []string{
			"VALIDATION_FAILED", "INVALID_TRANSITION", "NOT_FOUND", "RATE_LIMITED", "GATE_NOT_MET", "SERVICE_UNAVAILABLE",
		} {
			if !slices.Contains(codes, c) {
				t.Errorf("ErrorCode lacks %s: %v", c, codes)
			}
		}
		if len(codes) != len(api.ErrorCodes()) {
			t.Errorf("ErrorCode has %d codes, the status table %d", len(codes), len(api.ErrorCodes()))
		}
	})

	t.Run("4xx declared with their codes", func(t *testing.T) {
		for id, want := range map[string]map[int]string{
			"updateTask": {
				400: "INVALID_TRANSITION", 401: "INVALID_TOKEN", 403: "INSUFFICIENT_SCOPE", 404: "NOT_FOUND",
				429: "RATE_LIMITED",
			},
			"advanceRRCA":   {409: "GATE_NOT_MET"},
			"createTask":    {409: "CONFLICT", 422: "IDEMPOTENCY_KEY_REUSED", 413: "PAYLOAD_TOO_LARGE"},
			"createWebhook": {400: "URL_NOT_ALLOWED"},
			"createKey":     {400: "SCOPE_NOT_ALLOWED", 401: "UNAUTHENTICATED"},
		} {
			for st, code := range want {
				codes, ok := api.DeclaredCodes(op(id), st)
				if !ok || !slices.Contains(codes, code) {
					t.Errorf("%s declares %d with %v, want %s among them", id, st, codes, code)
				}
			}
		}
		if _, ok := api.DeclaredCodes(op("listTasks"), 409); ok {
			t.Error("listTasks declares 409, which a list never answers")
		}
	})

	t.Run("scopes on the oauth2 scheme and in the description", func(t *testing.T) {
		flows := doc.Components.SecuritySchemes["OAuth2"].Value.Flows
		device, _ := flows.Extensions["x-deviceAuthorization"].(map[string]any)
		scopes, _ := device["scopes"].(map[string]any)
		if device["tokenUrl"] != "/openapi/v1/oauth/token" || scopes["tasks:write"] == nil || scopes["rrca:read"] == nil {
			t.Fatalf("device flow %v", device)
		}
		o := op("updateTask")
		var oauth []string
		for _, req := range *o.Security {
			if s, ok := req["OAuth2"]; ok {
				oauth = s
			}
		}
		if !slices.Equal(oauth, []string{"tasks:write"}) || !strings.Contains(o.Description, "`tasks:write`") {
			t.Errorf("updateTask: OAuth2 scopes %v, description %q", oauth, o.Description)
		}
	})

	t.Run("descriptions everywhere", func(t *testing.T) {
		for path, item := range doc.Paths.Map() {
			for method, o := range item.Operations() {
				if o.Description == "" {
					t.Errorf("%s %s has no description", method, path)
				}
			}
		}
		for _, tag := range doc.Tags {
			if tag.Description == "" {
				t.Errorf("tag %s has no description", tag.Name)
			}
		}
	})

	t.Run("null clears: nullable update fields", func(t *testing.T) {
		if !prop("TaskUpdateRequest", "description").Value.Nullable ||
			!prop("TaskUpdateRequest", "assigneeId").Value.Nullable {
			t.Error("TaskUpdateRequest's description and assigneeId cannot be sent as null")
		}
		if prop("TaskUpdateRequest", "title").Value.Nullable {
			t.Error("TaskUpdateRequest.title may not be null, yet the document says it may")
		}
	})

	t.Run("webhooks are Path Items", func(t *testing.T) {
		hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
		post, _ := hooks["task.status_changed"].(map[string]any)["post"].(map[string]any)
		if post["operationId"] != "onTaskStatusChanged" || post["requestBody"] == nil || post["responses"] == nil {
			t.Errorf("task.status_changed: %v", post)
		}
		if api.WebhookPayloadSchema(doc, "task.status_changed") != "TaskStatusChangedEvent" {
			t.Errorf("task.status_changed data is %q", api.WebhookPayloadSchema(doc, "task.status_changed"))
		}
	})

	t.Run("naming slips", func(t *testing.T) {
		if schemas["ActionItemView"] == nil || schemas["ActionitemView"] != nil {
			t.Error("the action item's view is not named ActionItemView")
		}
		if prop("ProjectCreateRequest", "memberIds").Value.Items.Value.Format != "uuid" {
			t.Error("memberIds items are not format uuid")
		}
		if prop("RateLimitRequest", "rateLimitPerMinute") == nil || !prop("RateLimitRequest", "perMinute").Value.Deprecated {
			t.Error("RateLimitRequest: rateLimitPerMinute, and perMinute deprecated")
		}
	})
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}
