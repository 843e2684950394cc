package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
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
	pmapi.CodeNotImplemented:     http.StatusNotImplemented,
	pmapi.CodeConflict:           http.StatusConflict,
	pmapi.CodeGateNotMet:         http.StatusConflict,
	pmapi.CodeCursorExpired:      http.StatusGone,
	pmapi.CodePreconditionFailed: http.StatusPreconditionFailed,
	pmapi.CodePayloadTooLarge:    http.StatusRequestEntityTooLarge,
	pmapi.CodeUnsupportedMedia:   http.StatusUnsupportedMediaType,
	pmapi.CodeIdempotencyReused:  http.StatusUnprocessableEntity,
	pmapi.CodeRateLimited:        http.StatusTooManyRequests,
	pmapi.CodeQuotaExceeded:      http.StatusTooManyRequests,
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
			// A database error no store mapped (the credential lookup's, a
			// middleware's) gets the same mapping: a database that is down
			// is a 503, not an internal error.
			e = pmapi.AsError(tenant.DBError(err))
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
		rid := requestID(c)
		if status >= 500 {
			log.Error("request failed", "requestId", rid, "route", routeOf(c), "code", e.Code, "cause", causeText(e))
			e = &pmapi.Error{Code: e.Code, Message: safeMessage(status)}
		}
		if status == http.StatusServiceUnavailable {
			c.Set(fiber.HeaderRetryAfter, retryAfterSeconds)
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

// retryAfterSeconds is what a 503 asks a client to wait: a PostgreSQL restart
// or failover takes a few seconds, and clients spread their retries anyway.
const retryAfterSeconds = "2"

// safeMessage is a 5xx's message; the cause stays in the log.
func safeMessage(status int) string {
	switch status {
	case http.StatusServiceUnavailable:
		return "the service is unavailable for a moment; retry after Retry-After seconds"
	case http.StatusNotImplemented:
		return "this method is not one the server implements"
	}
	return "internal error; quote the request id when reporting it"
}

func causeText(e *pmapi.Error) string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return e.Message
}
