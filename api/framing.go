package api

import (
	"bytes"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/pmapi/pmapi"
)

// guardRequests answers, with the error envelope, two kinds of request Fiber
// would otherwise mishandle before any middleware runs:
//
//   - a method Fiber does not know (it answers a text/plain 400): 501
//     NOT_IMPLEMENTED, RFC 9110's answer to a method the server does not
//     recognise;
//   - a body framed both by Content-Length and by Transfer-Encoding, which
//     fasthttp reads as chunked: 400, and the connection is closed (RFC 9112
//     section 6.1), since a proxy in front that went by Content-Length would
//     see a different next request on it (request smuggling).
//
// It wraps the fasthttp server's handler, which app.Listener and app.Test
// both serve through.
func guardRequests(app *fiber.App) {
	srv := app.Server()
	next := srv.Handler
	known := app.Config().RequestMethods
	srv.Handler = func(rctx *fasthttp.RequestCtx) {
		var err error
		switch {
		case !slices.Contains(known, string(rctx.Method())):
			err = pmapi.Errorf(pmapi.CodeNotImplemented, "method %q is not one this server implements", rctx.Method())
		case rctx.Request.Header.ContentLength() == -1 && hasHeader(rctx.Request.Header.RawHeaders(), "Content-Length"):
			rctx.SetConnectionClose()
			err = pmapi.Errorf(pmapi.CodeValidation, "a request must not carry both Content-Length and Transfer-Encoding")
		default:
			next(rctx)
			return
		}
		c := app.AcquireCtx(rctx)
		defer app.ReleaseCtx(c)
		_ = app.ErrorHandler(c, err)
	}
}

// hasHeader reports whether raw request headers (as received) hold name.
func hasHeader(raw []byte, name string) bool {
	for _, line := range bytes.Split(raw, []byte("\n")) {
		key, _, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(key), []byte(name)) {
			return true
		}
	}
	return false
}
