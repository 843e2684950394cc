package api

import (
	"sync"

	"github.com/gofiber/fiber/v2"
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
