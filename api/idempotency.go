package api

import (
	"crypto/sha256"
	"encoding/json"
	"regexp"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api/idempotency"
	"github.com/pmapi/pmapi/authz"
)

const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
)

var saneIdempotencyKey = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)

// idempotent honours Idempotency-Key on create operations (docs/decisions/apps-and-keys.md,
// as Stripe and the IETF idempotency-key draft): same key and body replay the
// first response, another body is 422, a request still running is 409. For a
// create whose answer holds a secret (secretField), only the created id is
// kept and a replay is 409 naming it: the spec shows secrets once and never
// stores them in clear.
func (s *Server) idempotent(secretField string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get(headerIdempotencyKey)
		if key == "" {
			return c.Next()
		}
		if !saneIdempotencyKey.MatchString(key) {
			return pmapi.Invalid(headerIdempotencyKey, "Idempotency-Key must be 1 to 255 visible ASCII characters")
		}
		scope := idempotencyScope(c)
		h := sha256.New()
		h.Write([]byte(c.Method() + " " + c.Path() + "\n"))
		h.Write(c.Body())
		outcome, stored, err := idempotency.Begin(c.UserContext(), scope, key, h.Sum(nil))
		if err != nil {
			return err
		}
		switch outcome {
		case idempotency.Mismatch:
			return pmapi.Errorf(pmapi.CodeIdempotencyReused, "this Idempotency-Key was used with a different request body")
		case idempotency.InFlight:
			return pmapi.Errorf(pmapi.CodeConflict, "a request with this Idempotency-Key is still in progress; retry later")
		case idempotency.Replay:
			c.Set(headerReplayed, "true")
			if secretField != "" && stored.Status < 300 {
				id := createdID(stored.Body)
				return pmapi.Errorf(pmapi.CodeConflict,
					"the first request with this Idempotency-Key created %s; its %s was shown only in that answer",
					id, secretField).
					With("id", id)
			}
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.Status(stored.Status).Send(stored.Body)
		}
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		ctx := c.UserContext()
		if status >= 500 {
			return idempotency.Abandon(ctx, scope, key)
		}
		body := append([]byte(nil), c.Response().Body()...)
		if secretField != "" && status < 300 {
			body = keptOfSecretAnswer(body)
		}
		return idempotency.Finish(ctx, scope, key, idempotency.Response{Status: status, Body: body})
	}
}

// refuseIdempotencyKey answers 400 to an Idempotency-Key on a POST that does
// not keep answers (the operator's and OAuth's, which have no app to keep
// them for), so that a client never believes a retry safe when it is not.
// OAuth's form endpoints say so in RFC 6749's error shape, the verification
// page's form in HTML.
func refuseIdempotencyKey(op Operation) fiber.Handler {
	const refusal = "this operation does not take an Idempotency-Key; send it without one"
	return func(c *fiber.Ctx) error {
		switch {
		case c.Get(headerIdempotencyKey) == "":
			return c.Next()
		case op.Form:
			return oauthFail(c, "invalid_request", refusal, false)
		case op.HTML:
			c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
			return c.Status(fiber.StatusBadRequest).SendString("<!doctype html><title>Bad request</title><p>" + refusal + "</p>")
		}
		return pmapi.Invalid(headerIdempotencyKey, refusal)
	}
}

// keptOfSecretAnswer is what is stored of an answer holding a secret: the
// created resource's id (data.id, or data.clientId for an app), nothing else.
func keptOfSecretAnswer(body []byte) []byte {
	var answer struct {
		Data struct {
			ID       string `json:"id"`
			ClientID string `json:"clientId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &answer)
	id := answer.Data.ID
	if id == "" {
		id = answer.Data.ClientID
	}
	kept, _ := json.Marshal(map[string]string{"id": id})
	return kept
}

func createdID(kept []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(kept, &v)
	return v.ID
}

// idempotencyScope is whose key it is: the calling app (or console client) in
// its workspace.
func idempotencyScope(c *fiber.Ctx) idempotency.Scope {
	if p, ok := c.Locals(localPrincipal).(authz.Principal); ok {
		return idempotency.Scope{Shard: p.Shard, Workspace: p.Workspace.ID, ClientID: p.ClientID}
	}
	res := resolutionOf(c)
	return idempotency.Scope{Shard: res.Shard, Workspace: res.Workspace.ID, ClientID: c.Get(headerClientID)}
}
