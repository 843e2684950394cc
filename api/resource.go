package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Helpers shared by the resource handlers (projects, tasks, risks, notes, ...).

// tenantOf returns the caller's shard and workspace.
func tenantOf(c *fiber.Ctx) (*tenant.Shard, uuid.UUID) {
	p := principalOf(c)
	return p.Shard, p.Workspace.ID
}

// created answers a resource POST: 201 with the envelope.
func created(c *fiber.Ctx, data any) error { return respond(c, http.StatusCreated, data) }

// queryBool reads an optional true/false query parameter.
func queryBool(c *fiber.Ctx, name string) (bool, error) {
	switch raw := c.Query(name); raw {
	case "":
		return false, nil
	default:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return false, pmapi.Invalid(name, "%s must be true or false", name)
		}
		return b, nil
	}
}

// queryEnum reads an optional parameter that must be one of allowed.
func queryEnum(c *fiber.Ctx, name string, allowed ...string) (string, error) {
	raw := c.Query(name)
	if raw == "" {
		return "", nil
	}
	for _, a := range allowed {
		if raw == a {
			return raw, nil
		}
	}
	return "", pmapi.Invalid(name, "%s must be one of %v", name, allowed).With("allowed", allowed)
}

// queryTime reads an optional RFC 3339 timestamp (a bare date means its midnight UTC).
func queryTime(c *fiber.Ctx, name string) (*time.Time, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, raw); err == nil {
			return &t, nil
		}
	}
	return nil, pmapi.Invalid(name, "%s must be an RFC 3339 timestamp such as 2026-01-31T09:00:00Z, or a date", name)
}

// queryUser reads an optional user id parameter.
func queryUser(c *fiber.Ctx, name string) (*uuid.UUID, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, pmapi.Invalid(name, "%s must be a user id", name)
	}
	return &id, nil
}

// queryProject reads an optional project id parameter; a malformed id is a bad
// filter value (400), unlike a path or body reference (404).
func queryProject(c *fiber.Ctx, name string) (*uuid.UUID, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	id, err := project.ParseID(raw)
	if err != nil {
		return nil, pmapi.Invalid(name, "%s must be a project id (prj_...)", name)
	}
	return &id, nil
}

// pageCursor reads `cursor` for a list keyed by time-ordered ids.
func pageCursor(c *fiber.Ctx, list string) (*uuid.UUID, error) {
	raw, err := decodeCursor(list, c.Query("cursor"))
	if err != nil || raw == "" {
		return nil, err
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, pmapi.Invalid("cursor", "cursor is not one this list issued")
	}
	return &id, nil
}

// nextCursor returns the cursor after the last of limit items, or nil when the
// page is the last (the store was asked for limit+1 rows).
func nextCursor(list string, got, limit int, lastID func() uuid.UUID) *string {
	if got <= limit {
		return nil
	}
	s := encodeCursor(list, lastID().String())
	return &s
}

// optionalUser parses an optional user id field of a body.
func optionalUser(field string, s *string) (*uuid.UUID, error) {
	if s == nil {
		return nil, nil
	}
	id, err := project.ParseUserID(field, *s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}
