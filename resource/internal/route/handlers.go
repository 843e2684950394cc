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
// from PostgreSQL's wire values (api.ListRows). decode is api.DecodeSync of
// the resource's query; filter makes the store's filter of the query and the
// keyset (its order, updatedSince and the cursor's position, which the
// store hands storekit.Where.Page), asking for one row past the page, and
// says the page's limit.
func List[Query, Filter any](
	list string,
	decode func(c *fiber.Ctx, list string) (Query, api.Keyset, error),
	filter func(q Query, k api.Keyset) (f Filter, limit int),
	read func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f Filter, rows *jsonw.Rows) error,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, k, err := decode(c, list)
		if err != nil {
			return err
		}
		f, limit := filter(q, k)
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

// Named reads the id of the row a route is about (InQuery, InPath, InBody).
type Named func(c *fiber.Ctx) (uuid.UUID, error)

// Call is a store's read or change of one row in the caller's workspace.
type Call[Row any] func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (Row, error)

// Status answers a route's success with data (api.OK, api.Created).
type Status func(c *fiber.Ctx, data any) error

// answer runs call in the caller's workspace and answers with status the
// view of the row it leaves.
func answer[Row, View any](c *fiber.Ctx, status Status, view func(Row) View, call Call[Row]) error {
	shard, ws := api.Tenant(c)
	row, err := call(c.UserContext(), shard, ws)
	if err != nil {
		return err
	}
	return status(c, view(row))
}

// Get answers the view of the row named reads.
func Get[Row, View any](
	named Named,
	get func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return byID(api.OK, named, get, view)
}

// byID answers with status the view of the row call leaves of the one named
// reads.
func byID[Row, View any](
	status Status,
	named Named,
	call func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := named(c)
		if err != nil {
			return err
		}
		return answer(c, status, view, func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (Row, error) {
			return call(ctx, shard, ws, id)
		})
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
		return answer(c, api.Created, view, func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (Row, error) {
			return create(ctx, shard, ws, in)
		})
	}
}

// Update answers 201 with the view of the row after the changes parse reads
// from the body and the fields it names: the row's id and what to change.
func Update[Req, Changes, Row, View any](
	parse func(req Req, has Has) (uuid.UUID, Changes, error),
	update func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, ch Changes) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return Do(func(_ *fiber.Ctx, req Req, has Has) (change[Changes], error) {
		id, ch, err := parse(req, has)
		return change[Changes]{id, ch}, err
	}, func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ch change[Changes]) (Row, error) {
		return update(ctx, shard, ws, ch.id, ch.changes)
	}, view)
}

// change is an update's row and what to change in it.
type change[Changes any] struct {
	id      uuid.UUID
	changes Changes
}

// Do answers 201 with the view of the row do leaves: the operation is what
// op makes of the body and the fields it names, as a batch makes it of one
// of its items (api.Batch, whose parser is handed the request too, so that an
// operation can name its caller), run here on a route of its own, in a
// transaction of its own.
func Do[Req, Op, Row, View any](
	op func(c *fiber.Ctx, req Req, has Has) (Op, error),
	do func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (Row, error),
	view func(Row) View,
) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[Req](c)
		if err != nil {
			return err
		}
		o, err := op(c, req, api.BodyFields(c))
		if err != nil {
			return err
		}
		return answer(c, api.Created, view, func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (Row, error) {
			return do(ctx, shard, ws, o)
		})
	}
}

// Archive serves archive (archived true) and restore (false) of the row
// named reads, answering 201 with its view.
func Archive[Row, View any](
	named Named,
	set func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, archived bool) (Row, error),
	view func(Row) View,
	archived bool,
) fiber.Handler {
	return byID(api.Created, named, func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID) (Row, error) {
		return set(ctx, shard, ws, id, archived)
	}, view)
}

// InBody reads the id a body of type Req names (field picks it), by parse.
func InBody[Req any](field func(Req) string, parse Parse) Named {
	return func(c *fiber.Ctx) (uuid.UUID, error) {
		req, err := api.DecodeBody[Req](c)
		if err != nil {
			return uuid.Nil, err
		}
		return parse(field(req))
	}
}

// InQuery reads the id the query's id parameter names, by parse.
func InQuery(parse Parse) Named {
	return func(c *fiber.Ctx) (uuid.UUID, error) { return parse(c.Query("id")) }
}

// InPath reads the id the path parameter param names, by parse.
func InPath(param string, parse Parse) Named {
	return func(c *fiber.Ctx) (uuid.UUID, error) { return parse(c.Params(param)) }
}
