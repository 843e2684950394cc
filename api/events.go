package api

import (
	"net/http"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/resource/webhook"
)

// eventTypes is every event pmapi emits, gathered from the resources.
func eventTypes() []event.Type {
	var all []event.Type
	all = append(all, project.EventTypes()...)
	all = append(all, actionitem.EventTypes()...)
	all = append(all, rrca.EventTypes()...)
	all = append(all, event.Type{Name: "rrca.deleted", Description: "An analysis is deleted with its project", Payload: RRCADeletedEvent{}})
	all = append(all, task.EventTypes()...)
	all = append(all, risk.EventTypes()...)
	all = append(all, note.EventTypes()...)
	all = append(all, event.Type{Name: "webhook.test", Description: "The test operation of a webhook subscription is called",
		Payload: WebhookTestEvent{}})
	all = append(all, event.Type{Name: "webhook.disabled", Description: "A subscription is disabled (by a user, after 5 days of failures, or on 410 Gone)",
		Payload: webhook.DisabledEvent{}})
	all = append(all, event.Type{Name: "webhook.enabled", Description: "A disabled subscription is enabled again", Payload: webhook.DisabledEvent{}})
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// WebhookTestEvent is the data of webhook.test.
type WebhookTestEvent struct {
	SubscriptionID string `json:"subscriptionId"`
	Message        string `json:"message"`
}

// EventTypeView describes one event type.
type EventTypeView struct {
	Type        string `json:"type" example:"task.status_changed"`
	Description string `json:"description"`
	Schema      string `json:"schema" doc:"Name of the payload schema (the webhook body's data) under components.schemas"`
}

// EventTypeList is every event type.
type EventTypeList struct {
	Items []EventTypeView `json:"items"`
}

func (s *Server) eventTypeOperations() []Operation {
	return []Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/webhooks/event-types", ID: "listEventTypes", Tag: "Webhooks",
		Summary: "Every event type and the schema of its payload", Result: EventTypeList{}, Status: http.StatusOK,
		Handler: func(c *fiber.Ctx) error {
			out := EventTypeList{Items: []EventTypeView{}}
			for _, t := range eventTypes() {
				out.Items = append(out.Items, EventTypeView{Type: t.Name, Description: t.Description, Schema: schemaName(t.Payload)})
			}
			return respond(c, http.StatusOK, out)
		},
	}}
}

// RRCADeletedEvent is the data of rrca.deleted.
type RRCADeletedEvent struct {
	RRCAID    string `json:"rrcaId"`
	ProjectID string `json:"projectId"`
}
