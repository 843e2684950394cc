package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// The console calls the API's own routes in-process: a request built with the
// signed-in user's sid and the workspace's console client id runs through the
// same Fiber app (middleware, credentials, handler, error handler) as one
// from the network, and its envelope is read back. Nothing of the API is
// re-implemented here.

// apiError is the API's error, as its envelope carries it.
type apiError struct {
	Status    int            `json:"-"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details"`
	RequestID string         `json:"requestId"`
	// cause is an internal failure's reason, logged and never shown.
	cause error
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// Text is the error as a person reads it on a page.
func (e *apiError) Text() string {
	msg := e.Message
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	if f, ok := e.Details["field"].(string); ok && f != "" && !strings.Contains(msg, f) {
		msg += " (" + f + ")"
	}
	if na, ok := e.Details["notAllowed"].([]any); ok && len(na) > 0 {
		msg += fmt.Sprintf(" Not allowed: %v.", na)
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// creds are what a console call carries: the session and the client id.
type creds struct{ sid, clientID string }

// call runs method path (with its query) through the API with who's
// credentials; body, when not nil, is sent as JSON. On success the envelope's
// data is decoded into out (when not nil).
func (cn *Console) call(c *fiber.Ctx, who creds, method, path string, body, out any) *apiError {
	cn.once.Do(func() { cn.handler = cn.app.Handler() })
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost(string(c.Context().Host()))
	req.Header.Set(fiber.HeaderXForwardedProto, c.Protocol())
	// The page's request id goes with the call, so the audit log names the
	// request the person made.
	if id := requestID(c); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if who.clientID != "" {
		req.Header.Set("X-Client-ID", who.clientID)
	}
	if who.sid != "" {
		req.Header.SetCookie(cookieSession, who.sid)
	}
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return internalError(err)
		}
		req.Header.SetContentType(fiber.MIMEApplicationJSON)
		req.SetBody(raw)
	}
	var rctx fasthttp.RequestCtx
	rctx.Init(&req, c.Context().RemoteAddr(), nil)
	cn.handler(&rctx)
	status := rctx.Response.StatusCode()
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   *apiError       `json:"error"`
	}
	if err := json.Unmarshal(rctx.Response.Body(), &env); err != nil {
		return internalError(fmt.Errorf("%s %s answered %d without an envelope: %w", method, path, status, err))
	}
	if !env.Success || status >= 400 {
		if env.Error == nil {
			env.Error = &apiError{Code: "INTERNAL", Message: "the API answered without saying why"}
		}
		env.Error.Status = status
		if ra := string(rctx.Response.Header.Peek(fiber.HeaderRetryAfter)); ra != "" {
			env.Error.Message += "; try again in " + ra + " seconds"
		}
		return env.Error
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return internalError(fmt.Errorf("%s %s: %w", method, path, err))
		}
	}
	return nil
}

func internalError(err error) *apiError {
	return &apiError{
		Status:  http.StatusInternalServerError,
		Code:    "INTERNAL",
		Message: "something went wrong on our side",
		cause:   err,
	}
}

// apiPath joins path segments, escaping each, and adds a query.
func apiPath(q url.Values, segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if len(q) > 0 {
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String()
}

// requestID is the id the API's middleware gave the page's request (the
// console is mounted on the API's app), from its response header.
func requestID(c *fiber.Ctx) string { return string(c.Response().Header.Peek("X-Request-Id")) }
