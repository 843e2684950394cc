package api

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/observability"
	"github.com/pmapi/pmapi/tenant/usage"
)

// Keys of values that middleware hands to later handlers and to the access log.
const (
	localRequestID  = "pmapi.requestId"
	localErrorCode  = "pmapi.errorCode"
	localWorkspace  = "pmapi.workspaceId"
	localClientID   = "pmapi.clientId"
	headerRequestID = "X-Request-Id"
)

// saneRequestID accepts a caller's id only when it is short and plain, so it can
// be logged and echoed without escaping.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

// withRequestID echoes a sane X-Request-Id or makes one, on every response.
func withRequestID(c *fiber.Ctx) error {
	id := c.Get(headerRequestID)
	if !saneRequestID.MatchString(id) {
		id = newRequestID()
	}
	c.Locals(localRequestID, id)
	c.Set(headerRequestID, id)
	return c.Next()
}

// requestID returns the request's id, making one for responses written before the
// middleware ran (fasthttp answers an oversized body before any handler).
func requestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok {
		return id
	}
	id := newRequestID()
	c.Locals(localRequestID, id)
	c.Set(headerRequestID, id)
	return id
}

// recoverPanics turns a panic into an INTERNAL error; the stack goes to the log,
// never into the response.
func recoverPanics(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error(
					"panic",
					"requestId",
					requestID(c),
					"route",
					routeOf(c),
					"panic",
					fmt.Sprint(r),
					"stack",
					string(debug.Stack()),
				)
				err = pmapi.Errorf(pmapi.CodeInternal, "internal error").Wrap(fmt.Errorf("panic: %v", r))
			}
		}()
		return c.Next()
	}
}

// accessLog writes one JSON line per request and records its metrics and,
// for a request whose credential named a workspace, its usage. It never logs
// headers or bodies, so no credential can reach the log through it.
func accessLog(log *slog.Logger, counter *usage.Counter) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			// Let the error handler write the response now so the line below sees
			// its status; returning nil keeps it from running twice.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		elapsed := time.Since(start)
		route, status := routeOf(c), c.Response().StatusCode()
		code, _ := c.Locals(localErrorCode).(string)
		observeRequest(route, c.Method(), status, code, elapsed.Seconds())
		// Typed attributes, not key-value pairs: the same line without boxing
		// each value (docs/decisions/reads.md).
		var buf [8]slog.Attr
		attrs := append(buf[:0],
			slog.String("requestId", requestID(c)),
			slog.String("method", c.Method()),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("latencyMs", float64(elapsed.Microseconds())/1000),
		)
		ws, hasWS := c.Locals(localWorkspace).(string)
		if hasWS {
			attrs = append(attrs, slog.String("workspaceId", ws))
		}
		cid, hasClient := c.Locals(localClientID).(string)
		if hasClient {
			attrs = append(attrs, slog.String("clientId", cid))
		}
		if counter != nil && hasWS && hasClient {
			counter.Request(ws, cid, status, start)
		}
		if code != "" {
			attrs = append(attrs, slog.String("code", code))
		}
		logRequest(c.UserContext(), log, attrs)
		return nil
	}
}

// logRequest writes the access line. Into the JSON logger pmapi serve makes,
// it writes the line itself (observability.JSONLine, the same bytes as
// slog's), which costs about a fifth of slog's walk over the attributes
// (BenchmarkRequestFixedCost; docs/decisions/reads.md); any other logger,
// or a value slog would escape, takes slog's way.
func logRequest(ctx context.Context, log *slog.Logger, attrs []slog.Attr) {
	if lw, ok := log.Handler().(observability.LineWriter); ok && lw.Enabled(ctx, slog.LevelInfo) {
		l := accessLines.Get().(*observability.JSONLine)
		defer accessLines.Put(l)
		l.Start(time.Now(), slog.LevelInfo, "request")
		l.Attrs(attrs)
		if line, same := l.End(); same {
			_ = lw.WriteLine(line)
			return
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// accessLines are the access log's lines being written (JSONLine), reused.
var accessLines = sync.Pool{New: func() any { return &observability.JSONLine{B: make([]byte, 0, 512)} }}

// routeOf is the route template (never the raw path, which carries ids).
func routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" {
		return r.Path
	}
	return "unmatched"
}
