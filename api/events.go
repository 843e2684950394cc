package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

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
			for _, t := range s.catalog.Events {
				out.Items = append(
					out.Items,
					EventTypeView{Type: t.Name, Description: t.Description, Schema: schemaName(t.Payload)},
				)
			}
			return respond(c, http.StatusOK, out)
		},
	}}
}
