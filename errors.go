// Package pmapi holds the domain vocabulary shared by every layer of the server:
// the error type and its closed set of codes. It imports neither Fiber nor pgx, so
// rules written against it are tested without a database or an HTTP server.
package pmapi

import (
	"errors"
	"fmt"
)

// Code is one of the closed set of error codes of the public contract.
type Code string

// The codes of docs/decisions/envelope-and-errors.md plus WORKSPACE_SUSPENDED. The HTTP status of
// each is decided in one place, the api package's status table.
const (
	CodeValidation         Code = "VALIDATION_FAILED"
	CodeInvalidTransition  Code = "INVALID_TRANSITION"
	CodeScopeNotAllowed    Code = "SCOPE_NOT_ALLOWED"
	CodeInvalidWebhookURL  Code = "INVALID_WEBHOOK_URL"
	CodeURLNotAllowed      Code = "URL_NOT_ALLOWED"
	CodeUnauthenticated    Code = "UNAUTHENTICATED"
	CodeInvalidToken       Code = "INVALID_TOKEN"
	CodeTokenExpired       Code = "TOKEN_EXPIRED"
	CodeAppDisabled        Code = "APP_DISABLED"
	CodeWorkspaceSuspended Code = "WORKSPACE_SUSPENDED"
	CodeForbidden          Code = "FORBIDDEN"
	CodeInsufficientScope  Code = "INSUFFICIENT_SCOPE"
	CodeNotFound           Code = "NOT_FOUND"
	CodeMethodNotAllowed   Code = "METHOD_NOT_ALLOWED"
	CodeNotImplemented     Code = "NOT_IMPLEMENTED"
	CodeConflict           Code = "CONFLICT"
	CodeGateNotMet         Code = "GATE_NOT_MET"
	CodePreconditionFailed Code = "PRECONDITION_FAILED"
	CodeCursorExpired      Code = "CURSOR_EXPIRED"
	CodeIdempotencyReused  Code = "IDEMPOTENCY_KEY_REUSED"
	CodePayloadTooLarge    Code = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMedia   Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeRateLimited        Code = "RATE_LIMITED"
	CodeQuotaExceeded      Code = "QUOTA_EXCEEDED"
	CodeInternal           Code = "INTERNAL"
	CodeServiceUnavailable Code = "SERVICE_UNAVAILABLE"
)

// Error is the one error type that crosses layers. Message is safe to show to a
// client; Cause is for the log only and never serialized.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds an Error with a formatted, client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// With returns a copy of e carrying one more detail.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// Wrap returns a copy of e that keeps cause for the log.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// NotFound is the answer for absent rows and for rows of another workspace alike,
// so that a caller can never tell the two apart.
func NotFound(what string) *Error {
	return Errorf(CodeNotFound, "%s not found", what)
}

// Invalid reports a bad field; details name the field as integrators expect.
func Invalid(field, format string, args ...any) *Error {
	return Errorf(CodeValidation, format, args...).With("field", field)
}

// ErrorCode returns the code of err, or CodeInternal for an error that is not ours.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as an *Error, turning foreign errors into an INTERNAL error
// that keeps the original as its cause.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error", Cause: err}
}
