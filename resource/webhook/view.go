package webhook

import (
	"time"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
)

// Id prefixes: subscriptions, deliveries (the webhook body's id) and events
// (its eventId).
const (
	SubscriptionPrefix = "whk_"
	DeliveryPrefix     = "evt_"
	EventPrefix        = "evn_"
	SecretPrefix       = "whsec_"
)

// SubscriptionView is a subscription without its secret.
type SubscriptionView struct {
	ID                 string     `json:"id" example:"whk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ClientID           string     `json:"clientId"`
	URL                string     `json:"url" example:"https://hooks.example.com/pmapi"`
	Events             []string   `json:"events" doc:"Event types, or [\"*\"] for every type"`
	Status             string     `json:"status" enum:"ACTIVE,DISABLED"`
	SecretPrefix       string     `json:"secretPrefix" doc:"First characters of the current secret, to recognise it"`
	PreviousValidUntil *time.Time `json:"previousValidUntil" doc:"While set, deliveries are also signed with the previous secret"`
	DisabledReason     *string    `json:"disabledReason"`
	Circuit            string     `json:"circuit" enum:"CLOSED,OPEN,HALF_OPEN" doc:"The endpoint's circuit breaker: OPEN after consecutive failures, when deliveries wait for a probe instead of being attempted; HALF_OPEN while the probe is sent"`
	CircuitOpenedAt    *time.Time `json:"circuitOpenedAt" doc:"When the circuit last opened; null while it is CLOSED"`
	MaxPerSecond       *int       `json:"maxPerSecond" doc:"At most this many deliveries a second to the endpoint; null for no cap"`
	ProjectIDs         *[]string  `json:"projectIds" doc:"Only events of these projects are delivered (and events of no project, such as webhook.test); null for every project"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	DisabledAt         *time.Time `json:"disabledAt"`
}

// SubscriptionCreated is a new subscription with its secret, shown once.
type SubscriptionCreated struct {
	SubscriptionView
	Secret string `json:"secret" doc:"whsec_ + base64 of 32 bytes: signs every delivery (both schemes); shown only in this response"`
}

// SubscriptionList lists an app's subscriptions.
type SubscriptionList api.PageOf[SubscriptionView]

// CreateRequest subscribes an HTTPS endpoint.
type CreateRequest struct {
	URL          string    `json:"url" example:"https://hooks.example.com/pmapi"`
	Events       []string  `json:"events" example:"[\"task.status_changed\"]"`
	MaxPerSecond *int      `json:"maxPerSecond,omitempty" minimum:"1" maximum:"1000" doc:"Cap the deliveries a second to the endpoint (1 to 1000); left out, no cap"`
	ProjectIDs   *[]string `json:"projectIds,omitempty" minItems:"1" maxItems:"100" doc:"Deliver only events of these projects of the workspace (events of no project, such as webhook.test, still come); left out or null, every project"`
}

// UpdateRequest changes a subscription; absent fields stay, null removes the
// cap or the project filter.
type UpdateRequest struct {
	URL          *string   `json:"url,omitempty" nullable:"false" example:"https://hooks.example.com/pmapi" doc:"A new HTTPS endpoint, checked as at creation"`
	Events       *[]string `json:"events,omitempty" nullable:"false" doc:"The event types, replacing the list (checked as at creation)"`
	ProjectIDs   *[]string `json:"projectIds,omitempty" minItems:"1" maxItems:"100" doc:"Deliver only events of these projects (replacing the list); null for every project"`
	MaxPerSecond *int      `json:"maxPerSecond,omitempty" minimum:"1" maximum:"1000" doc:"Cap the deliveries a second to the endpoint (1 to 1000); null removes the cap"`
}

// RotateRequest rotates a secret; the body may be left out.
type RotateRequest struct {
	GraceSeconds *int `json:"graceSeconds,omitempty" doc:"How long the old secret keeps signing too; default 86400, 0 to 604800"`
}

// SecretRotated carries the new secret, shown once.
type SecretRotated struct {
	SubscriptionView
	Secret string `json:"secret" doc:"The new whsec_ + base64 secret, for both signature schemes; shown only in this response"`
}

// TestResult answers the synchronous test delivery.
type TestResult struct {
	Delivered  bool    `json:"delivered" doc:"The endpoint answered 2xx"`
	Status     int     `json:"status" doc:"The endpoint's HTTP status; 0 when no answer came"`
	DeliveryID string  `json:"deliveryId"`
	Error      *string `json:"error"`
}

// Body is what a delivery POSTs.
type Body = event.Delivery

// DeliveryView is a delivery with its state.
type DeliveryView struct {
	ID             string     `json:"id" example:"evt_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	SubscriptionID string     `json:"subscriptionId"`
	EventID        string     `json:"eventId" doc:"The event delivered (the body's eventId): the same for its replays"`
	EventType      string     `json:"eventType"`
	OccurredAt     time.Time  `json:"occurredAt" doc:"When the event's change was written (the body's occurredAt)"`
	Status         string     `json:"status" enum:"PENDING,RETRYING,SUCCEEDED,DEAD,CANCELLED"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	LastStatus     *int       `json:"lastStatus" doc:"HTTP status of the last attempt"`
	ReplayOf       *string    `json:"replayOf" doc:"The delivery this one replays"`
	CreatedAt      time.Time  `json:"createdAt"`
	CompletedAt    *time.Time `json:"completedAt"`
}

// AttemptView is one attempt of a delivery.
type AttemptView struct {
	Attempt         int       `json:"attempt"`
	At              time.Time `json:"at"`
	Outcome         string    `json:"outcome" enum:"succeeded,failed,blocked"`
	StatusCode      *int      `json:"statusCode"`
	LatencyMS       float64   `json:"latencyMs"`
	ResponseSnippet *string   `json:"responseSnippet" doc:"The first KiB of the response body"`
	Error           *string   `json:"error"`
}

// DeliveryDetail is a delivery with its attempts and payload.
type DeliveryDetail struct {
	DeliveryView
	Data     map[string]any `json:"data"`
	Attempts []AttemptView  `json:"attemptLog"`
}

// DeliveryList is a page of deliveries.
type DeliveryList struct {
	Items      []DeliveryView `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

// BulkReplayRequest replays a subscription's failed deliveries since a time.
type BulkReplayRequest struct {
	SubscriptionID  string    `json:"subscriptionId"`
	Since           time.Time `json:"since"`
	IncludeReplayed bool      `json:"includeReplayed,omitempty" doc:"Also replay a failed delivery whose event was already delivered again (replayed) since then; by default each event is replayed once, from its newest failed delivery"`
}

// BulkReplayed lists the new deliveries.
type BulkReplayed struct {
	Count int            `json:"count"`
	Items []DeliveryView `json:"items"`
}

// DisabledEvent is the data of webhook.disabled.
type DisabledEvent struct {
	SubscriptionID string `json:"subscriptionId"`
	Reason         string `json:"reason"`
}

// TestEvent is the data of webhook.test.
type TestEvent struct {
	SubscriptionID string `json:"subscriptionId"`
	Message        string `json:"message"`
}

// EventTypes documents the events subscriptions emit.
func EventTypes() []event.Type {
	return []event.Type{
		{Name: "webhook.test", Description: "The test operation of a webhook subscription is called", Payload: TestEvent{}},
		{
			Name:        "webhook.disabled",
			Description: "A subscription is disabled (by a user, after 5 days of failures, or on 410 Gone)",
			Payload:     DisabledEvent{},
		},
		{Name: "webhook.enabled", Description: "A disabled subscription is enabled again", Payload: DisabledEvent{}},
	}
}
