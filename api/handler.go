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

// Do is a store's call in the caller's workspace with what the request gave.
type Do[In, T any] func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in In) (T, error)

// Handle serves an AuthKey operation in the three steps of every resource
// route: read takes what the operation needs from the request (path, query,
// body) and checks it, do runs the store in the caller's workspace, and view
// makes the answer, sent with status in the envelope. The first error goes to
// the error handler.
func Handle[In, T, V any](status int, read func(*fiber.Ctx) (In, error), do Do[In, T], view func(T) V) fiber.Handler {
	return func(c *fiber.Ctx) error {
		row, err := readAndDo(c, read, do)
		if err != nil {
			return err
		}
		return respond(c, status, view(row))
	}
}

// readAndDo is Handle's first two steps.
func readAndDo[In, T any](c *fiber.Ctx, read func(*fiber.Ctx) (In, error), do Do[In, T]) (T, error) {
	in, err := read(c)
	if err != nil {
		var zero T
		return zero, err
	}
	shard, ws := Tenant(c)
	return do(c.UserContext(), shard, ws, in)
}

// Detail serves a detail route: the query's `id` parsed by parse (a malformed
// one is not found), the store's read, the view in the envelope.
func Detail[T, V any](parse func(string) (uuid.UUID, error), read Do[uuid.UUID, T], view func(T) V) fiber.Handler {
	return Handle(http.StatusOK, func(c *fiber.Ctx) (uuid.UUID, error) { return parse(c.Query("id")) }, read, view)
}

// AppendRow is a store's read of one row that appends the row's JSON to b
// itself (storekit.GetJSON), as AppendRows.
type AppendRow[In any] func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in In, b []byte) ([]byte, error)

// DetailRow is Detail for a store that writes the row's JSON (AppendRow).
func DetailRow(parse func(string) (uuid.UUID, error), read AppendRow[uuid.UUID]) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := parse(c.Query("id"))
		if err != nil {
			return err
		}
		shard, ws := Tenant(c)
		return respondJSON(c, http.StatusOK, func(b []byte) ([]byte, error) { return read(c.UserContext(), shard, ws, id, b) })
	}
}

// Write serves a write route answering 201: the body decoded strictly into a
// Req, parse turning it into the store's input (has tells null from absent),
// the store's write, the view in the envelope.
func Write[Req, In, T, V any](parse func(req Req, has func(string) bool) (In, error), write Do[In, T], view func(T) V) fiber.Handler {
	return Handle(http.StatusCreated, Body(parse), write, view)
}

// WriteOn serves a write route answering 201 on the row its body names:
// parse reads the row and the change (has tells null from absent), change
// does it, view makes the answer.
func WriteOn[Req, C, T, V any](parse func(req Req, has func(string) bool) (uuid.UUID, C, error), change Change[C, T], view func(T) V) fiber.Handler {
	return Write(func(req Req, has func(string) bool) (Target[C], error) {
		id, c, err := parse(req, has)
		return Target[C]{ID: id, Change: c}, err
	}, On(change), view)
}

// Body reads a JSON body strictly into a Req (DecodeBody) and parse turns it
// into the store's input; has tells null from absent.
func Body[Req, In any](parse func(req Req, has func(string) bool) (In, error)) func(*fiber.Ctx) (In, error) {
	return func(c *fiber.Ctx) (In, error) {
		req, err := decodeBody[Req](c)
		if err != nil {
			var zero In
			return zero, err
		}
		return parse(req, BodyFields(c))
	}
}

// PathID reads the id in the path parameter name with parse (a malformed one
// is not found).
func PathID(name string, parse func(string) (uuid.UUID, error)) func(*fiber.Ctx) (uuid.UUID, error) {
	return func(c *fiber.Ctx) (uuid.UUID, error) { return parse(c.Params(name)) }
}

// Target is a write's row and what to do to it, as a body names both.
type Target[C any] struct {
	ID     uuid.UUID
	Change C
}

// Named is a row a request names: its id and the id as given, which a
// delete's answer echoes.
type Named struct {
	ID    uuid.UUID
	Given string
}

// Name reads the id s with parse (a malformed one is not found).
func Name(parse func(string) (uuid.UUID, error), s string) (Named, error) {
	id, err := parse(s)
	return Named{ID: id, Given: s}, err
}

// Change is a store's call that does c to one row.
type Change[C, T any] func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, c C) (T, error)

// On calls change with a Target's row and change.
func On[C, T any](change Change[C, T]) Do[Target[C], T] {
	return func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in Target[C]) (T, error) {
		return change(ctx, shard, ws, in.ID, in.Change)
	}
}

// With calls change with c, fixed by the route (archive is SetArchived with
// true, restore with false), on the row the request names.
func With[C, T any](c C, change Change[C, T]) Do[uuid.UUID, T] {
	return func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (T, error) {
		return change(ctx, shard, ws, id, c)
	}
}

// AsIs is the view of a store's answer that already is one.
func AsIs[V any](v V) V { return v }

// Views makes the view of every row, an empty list (never null) for none.
func Views[T, V any](rows []T, view func(T) V) []V {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	return out
}
