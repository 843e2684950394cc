package api

import (
	"encoding/json"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// What the resources' handlers use of the core. A handler reads top to
// bottom: decode the request (DecodeBody, DecodeQuery, DecodeList), call the
// store in the caller's workspace (Tenant), answer (OK, Created; a list's
// page with Page or PageIn, or the JSON a store writes itself with DetailRow and
// ListRows). It returns its errors and never writes an error answer.

// Tenant returns the shard and workspace of an AuthKey operation's caller,
// the first arguments of every store call.
func Tenant(c *fiber.Ctx) (*tenant.Shard, uuid.UUID) {
	p := principalOf(c)
	return p.Shard, p.Workspace.ID
}

// Principal is the credential of an AuthKey operation: its client id and
// scopes besides its workspace.
func Principal(c *fiber.Ctx) authz.Principal { return principalOf(c) }

// Console returns the workspace and shard an AuthSession operation's client id
// resolved to.
func Console(c *fiber.Ctx) tenant.Resolution { return resolutionOf(c) }

// OK answers 200 with data in the success envelope.
func OK(c *fiber.Ctx, data any) error { return respond(c, http.StatusOK, data) }

// Created answers 201 with data in the success envelope: the status of every
// resource POST.
func Created(c *fiber.Ctx, data any) error { return respond(c, http.StatusCreated, data) }

// DecodeBody reads the JSON body into a T strictly (see decodeBody).
func DecodeBody[T any](c *fiber.Ctx) (T, error) { return decodeBody[T](c) }

// ParseBody reads the JSON body strictly into the request parse takes
// (DecodeBody) and answers what parse makes of it: a create's new row.
func ParseBody[Req, In any](c *fiber.Ctx, parse func(req Req) (In, error)) (In, error) {
	req, err := decodeBody[Req](c)
	if err != nil {
		var zero In
		return zero, err
	}
	return parse(req)
}

// DecodeOptionalBody is DecodeBody for operations whose body may be left out.
func DecodeOptionalBody[T any](c *fiber.Ctx) (T, error) { return decodeOptionalBody[T](c) }

// BodyFields tells which top-level fields the JSON body names, reading it once,
// to tell "absent" (leave alone) from "null" (clear) in updates.
func BodyFields(c *fiber.Ctx) func(field string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(c.Body(), &m)
	return func(field string) bool {
		_, ok := m[field]
		return ok
	}
}

// Views makes the view of every row, an empty list (never null) for none.
func Views[T, V any](rows []T, view func(T) V) []V {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	return out
}
