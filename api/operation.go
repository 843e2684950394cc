package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// Auth is the credential an operation demands.
type Auth int

const (
	// AuthNone: public (health, the OpenAPI document).
	AuthNone Auth = iota
	// AuthAdmin: the operator token, `Authorization: Bearer <PMAPI_ADMIN_TOKEN>`.
	AuthAdmin
	// AuthSession: `X-Client-ID` plus the console session cookie `sid`.
	AuthSession
	// AuthKey: `X-Client-ID` plus an API key or OAuth access token in `Authorization`.
	AuthKey
)

// Operation declares one route: what the router serves and what the OpenAPI
// document says about it come from the same value.
type Operation struct {
	Method  string
	Path    string // OpenAPI form: /openapi/v1/apps/{clientId}
	ID      string // operationId
	Summary string
	// Description says more than the summary: what the call does and when.
	Description string
	Tag         string
	Auth        Auth
	Scope       string // required scope for AuthKey operations
	// ScopeInHandler marks an AuthKey operation that needs no single scope: any
	// credential will do (GET /me) or the handler checks scopes per item (search).
	ScopeInHandler bool
	Query          any // struct whose `query` tags document the query parameters
	Body           any // request body type; nil for none
	Result         any // type of `data` in the success envelope; nil for a non-JSON answer
	Status         int // success status
	// Raw marks an answer that is not the envelope (the OpenAPI document itself,
	// health checks); Result then documents the raw body.
	Raw bool
	// MediaType is a Raw answer's media type when it is not JSON (a
	// workspace's export: application/x-ndjson); Result then documents one
	// line of it.
	MediaType string
	// Idempotent operations honour the Idempotency-Key header (POST creates).
	Idempotent bool
	// SecretField names the member of data holding a secret the spec shows
	// only once (app secret, API key, webhook secret). A replay of such an
	// Idempotent create answers 409 with the created resource's id instead of
	// the first response, which is not kept: it would store the secret in
	// clear and show it twice.
	SecretField string
	// Form marks a request body sent form-encoded (OAuth), JSON accepted too.
	Form bool
	// HTML marks an operation answering an HTML page.
	HTML bool
	// Errors documents error bodies of Raw operations, which do not use the
	// envelope (OAuth's RFC error shape), by status.
	Errors map[int]any
	// Fails lists the codes the operation answers besides those its
	// credentials, input and Idempotent already imply (a status move's
	// INVALID_TRANSITION, an RRCA gate's GATE_NOT_MET); the document declares
	// them (failures).
	Fails []pmapi.Code
	// IfMatch marks an operation that changes one resource: it honours
	// If-Match, which its store checks under the row's lock (api.IfMatch),
	// and a stale one is 412 PRECONDITION_FAILED.
	IfMatch bool
	Handler fiber.Handler
}

// fiberPath turns {name} segments into Fiber's :name.
func (o Operation) fiberPath() string {
	var b strings.Builder
	for _, seg := range strings.Split(o.Path, "/") {
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			b.WriteByte(':')
			b.WriteString(seg[1 : len(seg)-1])
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

// pathParams lists the {name} segments of the path in order.
func (o Operation) pathParams() []string {
	var out []string
	for _, seg := range strings.Split(o.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}
