package api

import (
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// Pages of lists: the client asks for limit items and gets nextCursor, an
// opaque token naming the list and the last key served
// (docs/decisions/pages.md). Stores are asked for limit+1 rows, so a full page tells whether
// another follows.

// PageOf is a page of a list: at most the limit asked for and the cursor of
// the next page (null on the last). A resource declares its list type as one
// (`type List api.PageOf[View]`), so what its list answers and what the
// document says are the same type.
type PageOf[V any] struct {
	Items      []V     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// pager is a list's query: it embeds ListQuery.
type pager interface{ paging() ListQuery }

func (q ListQuery) paging() ListQuery { return q }

// DecodeList reads the query of a list keyed by time-ordered ids, newest
// first, into a Q (DecodeQuery), and the id its cursor names: the page starts
// below it (nil on the first page). The handler asks its store for
// q.Limit+1 rows below it, and Page or ListRows cuts the extra one off.
func DecodeList[Q pager](c *fiber.Ctx, list string) (q Q, before *uuid.UUID, err error) {
	if q, err = DecodeQuery[Q](c); err != nil {
		return q, nil, err
	}
	raw, err := decodeCursor(list, q.paging().Cursor)
	if err != nil || raw == "" {
		return q, nil, err
	}
	id, err := cursorID(raw)
	return q, &id, err
}

// Page cuts up to limit+1 rows of a list keyed by id to the page's limit and
// makes the cursor after its last row (nil on the last page).
func Page[T any](list string, rows []T, limit int, id func(T) uuid.UUID) ([]T, *string) {
	return cut(list, rows, limit, func(r T) string { return id(r).String() })
}

// PageIn cuts the page the query's limit and cursor ask for out of all, a
// list a store reads whole because its parent bounds it (an analysis's
// nodes, a project's members, an app's subscriptions), keyed by key in the
// order the store gives, and makes the cursor after it (nil on the last
// page). A cursor whose row went meanwhile goes on after the first key past
// it. The page is never nil, so it is an empty list in JSON.
func PageIn[T any](c *fiber.Ctx, list string, all []T, key func(T) string) ([]T, *string, error) {
	q, err := DecodeQuery[ListQuery](c)
	if err != nil {
		return nil, nil, err
	}
	after, err := decodeCursor(list, q.Cursor)
	if err != nil {
		return nil, nil, err
	}
	if after != "" {
		start := slices.IndexFunc(all, func(r T) bool { return key(r) == after }) + 1
		if start == 0 {
			start = slices.IndexFunc(all, func(r T) bool { return key(r) > after })
		}
		if start < 0 {
			start = len(all)
		}
		all = all[start:]
	}
	page, next := cut(list, all, q.Limit, key)
	if page == nil {
		page = []T{}
	}
	return page, next, nil
}

// cut is Page for rows keyed by any text.
func cut[T any](list string, rows []T, limit int, key func(T) string) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	next := EncodeCursor(list, key(rows[limit-1]))
	return rows[:limit], &next
}

// pageAfter serves one of the core's lists in key order: the query's limit
// and cursor, read asked for one row more than the page after the cursor's
// key ("" on the first page), a page of views.
func pageAfter[T, V any](c *fiber.Ctx, list string, read func(after string, limit int) ([]T, error),
	key func(T) string, view func(T) V) error {
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
	rows, next := cut(list, rows, q.Limit, key)
	return respond(c, http.StatusOK, PageOf[V]{Items: Views(rows, view), NextCursor: next})
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
