package api

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/pmapi/pmapi/event"
)

// webhooks describes every event type as a Path Item under x-webhooks (the
// form OpenAPI 3.1's webhooks take, which Redoc renders for 3.0 too): the
// POST pmapi sends, its signature headers, and a body schema per type
// (TaskStatusChangedWebhook: WebhookBody with data narrowed to the payload).
func (b *builder) webhooks(events []event.Type) (map[string]any, error) {
	if _, err := b.schemaOf(event.Delivery{}); err != nil {
		return nil, fmt.Errorf("webhook body: %w", err)
	}
	bodyRef := "#/components/schemas/" + schemaName(event.Delivery{})
	hooks := map[string]any{}
	for _, t := range events {
		data, err := b.schemaOf(t.Payload)
		if err != nil {
			return nil, fmt.Errorf("event %s payload: %w", t.Name, err)
		}
		camel := camelEvent(t.Name)
		name := camel + "Webhook"
		if _, taken := b.doc.Components.Schemas[name]; taken {
			return nil, fmt.Errorf("api: event %s: schema %s exists already", t.Name, name)
		}
		narrow := openapi3.NewObjectSchema().WithPropertyRef("data", openapi3.NewSchemaRef(data.Ref, nil))
		b.doc.Components.Schemas[name] = openapi3.NewSchemaRef("", &openapi3.Schema{
			Description: "The request body of a " + t.Name + " delivery",
			AllOf:       openapi3.SchemaRefs{openapi3.NewSchemaRef(bodyRef, nil), openapi3.NewSchemaRef("", narrow)},
		})
		hooks[t.Name] = map[string]any{"post": map[string]any{
			"operationId": "on" + camel,
			"summary":     t.Description,
			"description": t.Description + ". pmapi POSTs this to every subscription to " + t.Name + " (or `*`); the " +
				"X-Service-Signature header (Stripe's scheme) signs the raw body, and so do the Standard Webhooks " +
				"headers webhook-id, webhook-timestamp and webhook-signature when the secret is whsec_ + base64 " +
				"(docs/webhooks.md). Any 2xx acknowledges it; anything " +
				"else, a redirect or no answer within 10 s is retried (1m, 5m, 30m, 2h, 12h).",
			"tags":       []any{"Webhooks"},
			"security":   []any{},
			"parameters": webhookHeaders(t.Name),
			"requestBody": map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + name}}}},
			"responses": map[string]any{
				"200": map[string]any{"description": "Received: any 2xx status acknowledges the delivery"},
				"400": map[string]any{"description": "Refused (a bad signature, say): the delivery is retried, then DEAD"},
			},
		}}
	}
	return hooks, nil
}

func webhookHeaders(eventType string) []any {
	h := func(name, desc, example string) map[string]any {
		return map[string]any{"name": name, "in": "header", "required": true, "description": desc,
			"schema": map[string]any{"type": "string"}, "example": example}
	}
	return []any{
		h("X-Service-Event", "The event type", eventType),
		h("X-Service-Delivery-Id", "The delivery id, the body's id", "evt_01JD8X3Q4ZP6V1T9K2M5N7R8S0"),
		h("X-Service-Signature", "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">`, one v1 per signing secret "+
			"(two while a rotated secret is in its grace period)",
			"t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"),
	}
}

// camelEvent spells an event type as a Go-style name: task.status_changed is
// TaskStatusChanged, action-item.created ActionItemCreated.
func camelEvent(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '_' || r == '-' || r == '*' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// WebhookPayloadSchema is the component name of the data of eventType's
// deliveries in doc, "" when the document does not describe it.
func WebhookPayloadSchema(doc *openapi3.T, eventType string) string {
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	var ref any = hooks[eventType]
	for _, key := range []string{"post", "requestBody", "content", "application/json", "schema", "$ref"} {
		m, _ := ref.(map[string]any)
		ref = m[key]
	}
	name, _ := ref.(string)
	body := doc.Components.Schemas[strings.TrimPrefix(name, "#/components/schemas/")]
	if body == nil || body.Value == nil || len(body.Value.AllOf) != 2 || body.Value.AllOf[1].Value == nil {
		return ""
	}
	data := body.Value.AllOf[1].Value.Properties["data"]
	if data == nil {
		return ""
	}
	return strings.TrimPrefix(data.Ref, "#/components/schemas/")
}
