package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[pmapi.Code]int{
	pmapi.CodeValidation:         http.StatusBadRequest,
	pmapi.CodeInvalidTransition:  http.StatusBadRequest,
	pmapi.CodeScopeNotAllowed:    http.StatusBadRequest,
	pmapi.CodeInvalidWebhookURL:  http.StatusBadRequest,
	pmapi.CodeURLNotAllowed:      http.StatusBadRequest,
	pmapi.CodeUnauthenticated:    http.StatusUnauthorized,
	pmapi.CodeInvalidToken:       http.StatusUnauthorized,
	pmapi.CodeTokenExpired:       http.StatusUnauthorized,
	pmapi.CodeAppDisabled:        http.StatusForbidden,
	pmapi.CodeWorkspaceSuspended: http.StatusForbidden,
	pmapi.CodeForbidden:          http.StatusForbidden,
	pmapi.CodeInsufficientScope:  http.StatusForbidden,
	pmapi.CodeNotFound:           http.StatusNotFound,
	pmapi.CodeMethodNotAllowed:   http.StatusMethodNotAllowed,
	pmapi.CodeConflict:           http.StatusConflict,
	pmapi.CodeGateNotMet:         http.StatusConflict,
	pmapi.CodePayloadTooLarge:    http.StatusRequestEntityTooLarge,
	pmapi.CodeUnsupportedMedia:   http.StatusUnsupportedMediaType,
	pmapi.CodeIdempotencyReused:  http.StatusUnprocessableEntity,
	pmapi.CodeRateLimited:        http.StatusTooManyRequests,
	pmapi.CodeInternal:           http.StatusInternalServerError,
	pmapi.CodeServiceUnavailable: http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status for code.
func StatusOf(code pmapi.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the `error` member of a failure envelope.
type ErrorBody struct {
	Code      string         `json:"code" doc:"Stable machine-readable code" example:"NOT_FOUND"`
	Message   string         `json:"message" doc:"Human-readable explanation; may change"`
	Details   map[string]any `json:"details" doc:"Structured context, such as the offending field"`
	RequestID string         `json:"requestId" doc:"Same value as the X-Request-Id header"`
}

// ErrorEnvelope is every failure response.
type ErrorEnvelope struct {
	Success bool      `json:"success" enum:"false"`
	Error   ErrorBody `json:"error"`
}

// fromFiber maps the framework's own errors (unknown route, body too large, bad
// method) onto the closed set of codes.
func fromFiber(fe *fiber.Error) *pmapi.Error {
	switch fe.Code {
	case http.StatusNotFound:
		return pmapi.Errorf(pmapi.CodeNotFound, "no such route")
	case http.StatusMethodNotAllowed:
		return pmapi.Errorf(pmapi.CodeMethodNotAllowed, "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return pmapi.Errorf(pmapi.CodePayloadTooLarge, "request body is larger than 1 MiB")
	case http.StatusUnsupportedMediaType:
		return pmapi.Errorf(pmapi.CodeUnsupportedMedia, "%s", fe.Message)
	case http.StatusBadRequest:
		return pmapi.Errorf(pmapi.CodeValidation, "malformed request: %s", fe.Message)
	case http.StatusRequestTimeout:
		return pmapi.Errorf(pmapi.CodeValidation, "no request arrived within the read timeout; the connection is closed")
	}
	if fe.Code >= 500 {
		return pmapi.Errorf(pmapi.CodeInternal, "internal error").Wrap(fe)
	}
	return pmapi.Errorf(pmapi.CodeValidation, "%s", fe.Message)
}

// errorHandler is Fiber's ErrorHandler: the only place an error response is
// written. Internal causes go to the log with the request id, never to the client.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		var e *pmapi.Error
		switch {
		case errors.As(err, &e):
		case errors.As(err, &fe):
			e = fromFiber(fe)
		default:
			e = pmapi.AsError(err)
		}
		status := StatusOf(e.Code)
		if fe != nil && fe.Code == http.StatusRequestTimeout {
			// fasthttp answers a connection on which no request arrived within
			// the read timeout, then closes it. Clients that opened it ahead
			// of need read this answer before their next request; 408 is the
			// status HTTP clients (Go's Transport among them) recognise there
			// as "the server closed an idle connection" and retry on a new one,
			// where a 400 would be taken as the answer to that request.
			status = http.StatusRequestTimeout
		}
		if status == http.StatusServiceUnavailable {
			// Every 503 is a moment's unavailability (a placement switch-over,
			// a database not ready), so the client is told when to try again.
			c.Set(fiber.HeaderRetryAfter, "1")
		}
		rid := requestID(c)
		if status >= 500 {
			log.Error("request failed", "requestId", rid, "route", routeOf(c), "code", e.Code, "cause", causeText(e))
			e = &pmapi.Error{Code: e.Code, Message: "internal error; quote the request id when reporting it"}
		}
		details := e.Details
		if details == nil {
			details = map[string]any{}
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Locals(localErrorCode, string(e.Code))
		return c.Status(status).JSON(ErrorEnvelope{Error: ErrorBody{
			Code: string(e.Code), Message: e.Message, Details: details, RequestID: rid,
		}})
	}
}

func causeText(e *pmapi.Error) string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return e.Message
}
