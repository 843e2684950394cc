package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/tenant"
)

// Pages of lists: the client asks for limit items and gets nextCursor, an
// opaque token naming the list and the last key served (docs/decisions.md,
// Pages). Stores are asked for limit+1 rows, so a full page tells whether
// another follows.

// Before reads the cursor of a list keyed by time-ordered ids, newest first:
// the id the next page starts below, nil on the first page.
func (q ListQuery) Before(list string) (*uuid.UUID, error) {
	raw, err := DecodeCursor(list, q.Cursor)
	if err != nil || raw == "" {
		return nil, err
	}
	id, err := cursorID(raw)
	return &id, err
}

// Page turns up to limit+1 rows of a list keyed by id into at most limit
// views and the cursor after the last one (nil on the last page).
func Page[T, V any](list string, rows []T, limit int, id func(T) uuid.UUID, view func(T) V) ([]V, *string) {
	return pageBy(list, rows, limit, func(r T) string { return id(r).String() }, view)
}

// pageBy is Page for rows keyed by any text.
func pageBy[T, V any](list string, rows []T, limit int, key func(T) string, view func(T) V) ([]V, *string) {
	out := make([]V, 0, min(len(rows), limit))
	for i, r := range rows {
		if i == limit {
			next := EncodeCursor(list, key(rows[limit-1]))
			return out, &next
		}
		out = append(out, view(r))
	}
	return out, nil
}

// pageAfter serves one of the core's lists in key order: the query's limit
// and cursor, read asked for one row more than the page after the cursor's
// key ("" on the first page), a page of views.
func pageAfter[T, V any](c *fiber.Ctx, list string, read func(after string, limit int) ([]T, error), key func(T) string, view func(T) V) error {
	q, err := DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	after, err := decodeCursor(list, q.Cursor)
	if err != nil {
		return err
	}
	rows, err := read(after, q.Limit+1)
	if err != nil {
		return err
	}
	var page PageOf[V]
	page.Items, page.NextCursor = pageBy(list, rows, q.Limit, key, view)
	return respond(c, http.StatusOK, page)
}

// cursorID reads the id a cursor's key holds; uuid.Nil for none.
func cursorID(after string) (uuid.UUID, error) {
	if after == "" {
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(after)
	if err != nil {
		return id, pmapi.Invalid("cursor", "cursor is not one this list issued")
	}
	return id, nil
}

// EncodeCursor makes the cursor of list after the key after.
func EncodeCursor(list, after string) string { return encodeCursor(list, after) }

// DecodeCursor returns the key a cursor of list names ("" for none); a cursor
// of another list or a made-up one is 400 naming cursor.
func DecodeCursor(list, raw string) (string, error) { return decodeCursor(list, raw) }

// PageOf is a page of a list: at most the limit asked for and the cursor of
// the next page (null on the last). A resource declares its list type as one
// (`type List api.PageOf[View]`), so what List answers and what the document
// says are the same type.
type PageOf[V any] struct {
	Items      []V     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// pager is a list's query: it embeds ListQuery.
type pager interface{ paging() ListQuery }

func (q ListQuery) paging() ListQuery { return q }

// List serves a list newest first, keyed by time-ordered ids: the query
// decoded into a Q (DecodeQuery), filter making the store's filter of it with
// the id the page starts below (nil on the first) and one row more than the
// page holds (so a full page tells whether another follows), the store's
// read, a page of views with the cursor of the next.
func List[Q pager, F, T, V any](name string, filter func(q Q, before *uuid.UUID, limit int) F, list Do[F, []T],
	id func(T) uuid.UUID, view func(T) V) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, limit, err := listFilter(c, name, filter)
		if err != nil {
			return err
		}
		shard, ws := Tenant(c)
		rows, err := list(c.UserContext(), shard, ws, f)
		if err != nil {
			return err
		}
		var next *string
		if len(rows) > limit {
			rows = rows[:limit]
			cursor := EncodeCursor(name, id(rows[limit-1]).String())
			next = &cursor
		}
		return respond(c, http.StatusOK, PageOf[V]{Items: Views(rows, view), NextCursor: next})
	}
}

// listFilter decodes a list's query and makes the store's filter of it
// (List), asking for one row more than the page's limit.
func listFilter[Q pager, F any](c *fiber.Ctx, name string, filter func(q Q, before *uuid.UUID, limit int) F) (f F, limit int, err error) {
	q, err := DecodeQuery[Q](c)
	if err != nil {
		return f, 0, err
	}
	p := q.paging()
	before, err := p.Before(name)
	if err != nil {
		return f, 0, err
	}
	return filter(q, before, p.Limit+1), p.Limit, nil
}

// AppendRows is a store's list read that writes its rows' JSON into rows
// itself (storekit.ListJSON), byte for byte what encoding/json writes for
// their views.
type AppendRows[F any] func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f F, rows *jsonw.Rows) error

// ListRows is List for a store that writes its rows' JSON (AppendRows): the
// page goes from PostgreSQL's wire values into one pooled buffer, with no Go
// value made of a row and no reflection; the document still describes the
// view (docs/decisions.md, Reads).
func ListRows[Q pager, F any](name string, filter func(q Q, before *uuid.UUID, limit int) F, list AppendRows[F]) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, limit, err := listFilter(c, name, filter)
		if err != nil {
			return err
		}
		shard, ws := Tenant(c)
		return respondJSON(c, http.StatusOK, func(b []byte) ([]byte, error) {
			rows := jsonw.Rows{B: append(b, `{"items":[`...)}
			if err := list(c.UserContext(), shard, ws, f, &rows); err != nil {
				return b, err
			}
			var next *string
			if last, more := rows.Cut(limit); more {
				cursor := EncodeCursor(name, last.String())
				next = &cursor
			}
			b = append(rows.B, `],"nextCursor":`...)
			return append(jsonw.StringPtr(b, next), '}'), nil
		})
	}
}

// PageIn cuts the page the query's limit and cursor ask for out of rows, a
// list a store reads whole because its parent bounds it (an analysis's
// nodes, a project's members, an app's subscriptions), keyed by key in the
// order the store gives. A cursor whose row went meanwhile goes on after the
// first key past it.
func PageIn[T, V any](c *fiber.Ctx, list string, rows []T, key func(T) string, view func(T) V) (PageOf[V], error) {
	var page PageOf[V]
	q, err := DecodeQuery[ListQuery](c)
	if err != nil {
		return page, err
	}
	after, err := decodeCursor(list, q.Cursor)
	if err != nil {
		return page, err
	}
	if after != "" {
		start := slices.IndexFunc(rows, func(r T) bool { return key(r) == after }) + 1
		if start == 0 {
			start = slices.IndexFunc(rows, func(r T) bool { return key(r) > after })
		}
		if start < 0 {
			start = len(rows)
		}
		rows = rows[start:]
	}
	page.Items, page.NextCursor = pageBy(list, rows, q.Limit, key, view)
	return page, nil
}

// HandleAll is Handle for such a list: the store's rows paged by PageIn.
func HandleAll[In, T, V any](list string, read func(*fiber.Ctx) (In, error), do Do[In, []T], key func(T) string, view func(T) V) fiber.Handler {
	return func(c *fiber.Ctx) error {
		rows, err := readAndDo(c, read, do)
		if err != nil {
			return err
		}
		page, err := PageIn(c, list, rows, key, view)
		if err != nil {
			return err
		}
		return respond(c, http.StatusOK, page)
	}
}
