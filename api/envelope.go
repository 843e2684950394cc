package api

import (
	"context"
	"net/http"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/tenant"
)

// envelope is every success response.
type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// respond writes data in the success envelope with status.
func respond(c *fiber.Ctx, status int, data any) error {
	return c.Status(status).JSON(envelope{Success: true, Data: data})
}

// bodies holds the buffers respondJSON writes answers into, so a page's
// few kilobytes are not allocated and collected again on every request.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// respondJSON writes the success envelope around the JSON data appends, as
// respond would for the value it describes. When data fails, nothing is
// written and its error goes to the error handler.
func respondJSON(c *fiber.Ctx, status int, data func(b []byte) ([]byte, error)) error {
	buf := bodies.Get().(*[]byte)
	b, err := data(append((*buf)[:0], `{"success":true,"data":`...))
	if err == nil {
		c.Status(status).Response().Header.SetContentType(fiber.MIMEApplicationJSON)
		// The buffer becomes the body and the body's last buffer comes back
		// for the pool, rather than the page being copied (SetBody).
		b = c.Response().SwapBody(append(b, '}'))
	}
	if cap(b) >= 4<<10 && cap(b) <= 1<<20 {
		*buf = b[:0]
		bodies.Put(buf)
	}
	return err
}

// DetailRow answers 200 with the row id names as read writes it: read is a
// store's read in the caller's workspace that appends the row's JSON to b
// itself (storekit.GetJSON), into the pooled buffer ListRows writes a page
// into.
func DetailRow(c *fiber.Ctx, id uuid.UUID,
	read func(ctx context.Context, shard *tenant.Shard, ws, id uuid.UUID, b []byte) ([]byte, error)) error {
	shard, ws := Tenant(c)
	return respondJSON(c, http.StatusOK, func(b []byte) ([]byte, error) {
		return read(c.UserContext(), shard, ws, id, b)
	})
}

// ListRows answers 200 with a page of list as read writes it: read is a
// store's list read in the caller's workspace with filter f, asked for
// limit+1 rows, that writes its rows' JSON into rows itself
// (storekit.ListJSON). The page goes from PostgreSQL's wire values into one
// pooled buffer, with no Go value made of a row and no reflection, and the
// document still describes the view (docs/decisions/reads.md). A row past
// limit is cut off and names the next page's cursor.
func ListRows[F any](c *fiber.Ctx, list string, limit int, f F,
	read func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, f F, rows *jsonw.Rows) error) error {
	shard, ws := Tenant(c)
	return respondJSON(c, http.StatusOK, func(b []byte) ([]byte, error) {
		rows := jsonw.Rows{B: append(b, `{"items":[`...)}
		if err := read(c.UserContext(), shard, ws, f, &rows); err != nil {
			return b, err
		}
		var next *string
		if last, more := rows.Cut(limit); more {
			cursor := EncodeCursor(list, last.String())
			if rows.ByUpdate {
				cursor = EncodeCursor(list+":"+SortUpdatedAt, UpdateCursorKey(rows.LastAt(), last))
			}
			next = &cursor
		}
		b = append(rows.B, `],"nextCursor":`...)
		return append(jsonw.StringPtr(b, next), '}'), nil
	})
}
