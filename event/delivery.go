package event

import (
	"encoding/json"
	"time"
)

// Delivery is the body of every webhook request (DESIGN.md section 7). The
// OpenAPI document describes it as WebhookBody, and data by the schema that
// x-webhooks names for its type.
type Delivery struct {
	ID         string          `json:"id" example:"evt_01JD8X3Q4ZP6V1T9K2M5N7R8S0" doc:"The delivery id, also in X-Service-Delivery-Id: the same through one delivery's retries, new for every subscription and every replay"`
	EventID    string          `json:"eventId" example:"evn_01JD8X3Q4ZA2B3C4D5E6F7G8H9" doc:"The event's id: the same for every subscription and every replay of the event. Receivers de-duplicate on it (delivery is at least once)"`
	Type       string          `json:"type" example:"task.status_changed"`
	OccurredAt time.Time       `json:"occurredAt" doc:"When the change was written. Receivers order by (occurredAt, eventId): a later change to one record has a later occurredAt, and the events of one transaction have increasing eventIds in the order they were made"`
	Data       json.RawMessage `json:"data" doc:"The event's payload; x-webhooks names its schema for each type"`
	SentAt     time.Time       `json:"sentAt" doc:"When this attempt was sent (the signature's t is the same second)"`
}

// SchemaName names the body in the OpenAPI document.
func (Delivery) SchemaName() string { return "WebhookBody" }
