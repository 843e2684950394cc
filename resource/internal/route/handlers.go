package route

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/tenant"
)

// The handlers below are the routes most resources serve alike: each reads
// top to bottom as the resource's own would (decode, call the store in the
// caller's workspace, answer the view) and is handed the resource's parser,
// its store's method and its view converter. A rule that one day applies to
// every get, create or update (a version check, say) is written here once.

// Parse reads a resource's id from its text (the resource's ParseID): a
// malformed or foreign id is the resource's not-found.
type Parse func(s string) (uuid.UUID, error)

// Has says whether the body named a field (api.BodyFields): an update tells
// an absent field from a null one by it.
type Has = func(field string) bool

// List answers a page of the list named list, written by the store straight
// from PostgreSQL's wire values (api.ListRows). decode is api.DecodeList of
// the resource's query; filter makes the store's filter of the query and the
// cursor's position, asking for one row past the page, and says the page's
// limit.
func List[Query, Filter any](
	list string,
	decode func(c *fiber.Ctx, list string) (Query, *uuid.UUID, error),
	filter func(q Query, before *uuid.UUID) (f Filter, limit int),
	read func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, before, err := decode(c, list)
		if err != nil {
			return err
		}
		f, limit := filter(q, before)
		return api.ListRows(c, list, limit, f, read)
	}
}

// Detail answers the row the query's id names, written by the store straight
// from PostgreSQL's wire values (api.DetailRow).
func Detail(
	parse Parse,
	read func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, b []byte) ([]byte, error),
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := parse(c.Query("id"))
		if err != nil {
			return err
		}
		return api.DetailRow(c, id, read)
	}
}

// Create answers 201 with the view of the row create makes of what parse
// reads from the body (api.ParseBody).
func Create[Req, In, Row, View any](
	parse func(req Req) (In, error),
	create func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, in In) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		in, err := api.ParseBody(c, parse)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		row, err := create(c.UserContext(), shard, ws, in)
		if err != nil {
			return err
		}
		return api.Created(c, view(row))
	}
}

// Update answers 201 with the view of the row after the changes parse reads
// from the body and the fields it names: the row's id and what to change.
func Update[Req, Changes, Row, View any](
	parse func(req Req, has Has) (uuid.UUID, Changes, error),
	update func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, ch Changes) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[Req](c)
		if err != nil {
			return err
		}
		id, changes, err := parse(req, api.BodyFields(c))
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		row, err := update(c.UserContext(), shard, ws, id, changes)
		if err != nil {
			return err
		}
		return api.Created(c, view(row))
	}
}

// Do answers 201 with the view of the row do leaves: the operation is what
// op makes of the body and the fields it names, as a batch makes it of one
// of its items (api.Batch), run here on a route of its own, in a transaction
// of its own.
func Do[Req, Op, Row, View any](
	op func(req Req, has Has) (Op, error),
	do func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[Req](c)
		if err != nil {
			return err
		}
		o, err := op(req, api.BodyFields(c))
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		row, err := do(c.UserContext(), shard, ws, o)
		if err != nil {
			return err
		}
		return api.Created(c, view(row))
	}
}

// Archival is a store's archive and restore (storekit.Archival.Run).
type Archival[Row any] func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, archived bool) (Row, error)

// Archive serves archive (archived true) and restore (false) of the row
// named reads, answering 201 with its view.
func Archive[Row, View any](named func(*fiber.Ctx) (uuid.UUID, error), set Archival[Row], view func(Row) View,
	archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := named(c)
		if err != nil {
			return err
		}
		shard, ws := api.Tenant(c)
		row, err := set(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return api.Created(c, view(row))
	}
}

// InBody reads the id a body of type Req names (field picks it), by parse.
func InBody[Req any](field func(Req) string, parse Parse) func(*fiber.Ctx) (uuid.UUID, error) {
	return func(c *fiber.Ctx) (uuid.UUID, error) {
		req, err := api.DecodeBody[Req](c)
		if err != nil {
			return uuid.Nil, err
		}
		return parse(field(req))
	}
}

// InPath reads the id the path parameter param names, by parse.
func InPath(param string, parse Parse) func(*fiber.Ctx) (uuid.UUID, error) {
	return func(c *fiber.Ctx) (uuid.UUID, error) { return parse(c.Params(param)) }
}
