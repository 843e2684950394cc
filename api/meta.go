package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status" enum:"ok,unavailable"`
	Error  string `json:"error,omitempty" doc:"Why the server is not ready"`
}

func (s *Server) metaOperations() []Operation {
	return append([]Operation{
		{
			Method: http.MethodGet, Path: "/openapi/v1/openapi.json", ID: "getOpenAPIDocument", Tag: "Meta",
			Summary: "This machine-readable description of the API", Status: http.StatusOK, Raw: true,
			Handler: func(c *fiber.Ctx) error {
				c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
				return c.Send(s.docJSON)
			},
		},
		{
			Method: http.MethodGet, Path: "/healthz", ID: "healthz", Tag: "Meta",
			Summary: "Process liveness; no dependencies checked", Status: http.StatusOK, Result: Health{}, Raw: true,
			Handler: func(c *fiber.Ctx) error { return c.JSON(Health{Status: "ok"}) },
		},
		{
			Method: http.MethodGet, Path: "/readyz", ID: "readyz", Tag: "Meta",
			Summary: "Readiness: every shard reachable and migrated (503 otherwise)",
			Status:  http.StatusOK, Result: Health{}, Raw: true,
			Handler: s.readyz,
		},
	}, s.referenceOperations()...)
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if s.Ready == nil {
		return c.JSON(Health{Status: "ok"})
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := s.Ready(ctx); err != nil {
		s.Log.Warn("not ready", "error", err.Error())
		return pmapi.Errorf(pmapi.CodeServiceUnavailable, "not ready: %v", err)
	}
	return c.JSON(Health{Status: "ok"})
}
