package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// What the resources' handler files use of the core: who is calling, the
// decoded request, the encoded answer.

// Principal is the credential of an AuthKey operation.
func Principal(c *fiber.Ctx) authz.Principal { return principalOf(c) }

// Tenant returns the shard and workspace of an AuthKey operation's caller.
func Tenant(c *fiber.Ctx) (*tenant.Shard, uuid.UUID) {
	p := principalOf(c)
	return p.Shard, p.Workspace.ID
}

// Console returns the workspace and shard an AuthSession operation's client id
// resolved to.
func Console(c *fiber.Ctx) tenant.Resolution { return resolutionOf(c) }

// Respond writes data in the success envelope with status.
func Respond(c *fiber.Ctx, status int, data any) error { return respond(c, status, data) }

// Created answers a resource POST: 201 with the envelope.
func Created(c *fiber.Ctx, data any) error { return respond(c, http.StatusCreated, data) }

// DecodeBody reads the JSON body into a T strictly (see decodeBody).
func DecodeBody[T any](c *fiber.Ctx) (T, error) { return decodeBody[T](c) }

// DecodeOptionalBody is DecodeBody for operations whose body may be left out.
func DecodeOptionalBody[T any](c *fiber.Ctx) (T, error) { return decodeOptionalBody[T](c) }

// DecodeJSON decodes one JSON object strictly into v, as a body would be.
func DecodeJSON(body []byte, v any) error { return decodeJSON(body, v) }

// BodyFields tells which top-level fields the JSON body names, reading it once,
// to tell "absent" (leave alone) from "null" (clear) in updates.
func BodyFields(c *fiber.Ctx) func(field string) bool { return Fields(c.Body()) }

// Fields tells which top-level fields a JSON object names.
func Fields(object []byte) func(field string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(object, &m)
	return func(field string) bool {
		_, ok := m[field]
		return ok
	}
}

// Reader is a store's read of one row of the caller's workspace.
type Reader[T any] func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (T, error)

// Detail serves a detail route: the query's `id` parsed by parse (a malformed
// one is not found), the store's read, the view in the envelope.
func Detail[T, V any](parse func(string) (uuid.UUID, error), read Reader[T], view func(T) V) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := parse(c.Query("id"))
		if err != nil {
			return err
		}
		shard, ws := Tenant(c)
		row, err := read(c.UserContext(), shard, ws, id)
		if err != nil {
			return err
		}
		return respond(c, http.StatusOK, view(row))
	}
}

// Write serves a write route answering 201: the body decoded strictly into a
// Req, parse turning it into the store's input (has tells null from absent),
// the store's write, the view in the envelope.
func Write[Req, In, T, V any](parse func(req Req, has func(string) bool) (In, error),
	write func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in In) (T, error), view func(T) V) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := decodeBody[Req](c)
		if err != nil {
			return err
		}
		in, err := parse(req, BodyFields(c))
		if err != nil {
			return err
		}
		shard, ws := Tenant(c)
		row, err := write(c.UserContext(), shard, ws, in)
		if err != nil {
			return err
		}
		return respond(c, http.StatusCreated, view(row))
	}
}
