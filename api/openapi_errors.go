package api

import (
	"fmt"
	"net/http"
	"slices"
	"sort"

	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/pmapi/pmapi"
)

// ErrorCodesExtension lists, on a declared error response, the codes the
// operation can answer with that status; apitest holds every error response
// of the suite to it.
const ErrorCodesExtension = "x-error-codes"

// ErrorCodes is every code the status table knows: the ErrorCode enum,
// derived so that a code added there reaches the document by itself.
func ErrorCodes() []string {
	out := make([]string, 0, len(statusOf))
	for c := range statusOf {
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// errorSchemas adds the error envelope (ErrorEnvelope, ErrorBody, the ErrorCode
// enum) and the response of unexpected failures every operation may get.
func (b *builder) errorSchemas() error {
	ref, err := b.schemaOf(ErrorEnvelope{})
	if err != nil {
		return err
	}
	env := b.doc.Components.Schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")].Value
	// A one-value boolean enum would make generators emit a constant named
	// False; the description says it instead.
	env.Properties["success"].Value.Enum = nil
	env.Properties["success"].Value.Description = "Always false on failure"
	body := b.doc.Components.Schemas[schemaName(ErrorBody{})].Value
	code := body.Properties["code"].Value
	code.Enum = nil
	for _, c := range ErrorCodes() {
		code.Enum = append(code.Enum, c)
	}
	code.Extensions = map[string]any{enumNameExtension: "ErrorCode"}
	b.doc.Components.Responses["Error"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("Unexpected failure: 500 INTERNAL (quote the requestId), or 503 SERVICE_UNAVAILABLE " +
			"when the database cannot be reached (retry after Retry-After)").
		WithJSONSchemaRef(openapi3.NewSchemaRef(ref.Ref, nil))}
	return nil
}

// addFailures declares the error answers of op: by status, the codes it can
// answer (failures), each the error envelope; the rest (5xx) under default.
// OAuth's endpoints answer RFC 6749's error shape instead (op.Errors), the
// reference page HTML.
func (b *builder) addFailures(o *openapi3.Operation, op Operation) error {
	def := &openapi3.ResponseRef{Ref: "#/components/responses/Error"}
	switch {
	case op.HTML:
		for _, st := range []int{400, 401, 403, 404, 429} {
			o.AddResponse(st, openapi3.NewResponse().WithDescription(http.StatusText(st)).
				WithContent(openapi3.Content{"text/html": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())}))
		}
	case len(op.Errors) > 0:
		for st, body := range op.Errors {
			ref, err := b.schemaOf(body)
			if err != nil {
				return err
			}
			o.AddResponse(st, openapi3.NewResponse().WithDescription(http.StatusText(st)).WithJSONSchemaRef(ref))
		}
	default:
		envRef := openapi3.NewSchemaRef("#/components/schemas/"+schemaName(ErrorEnvelope{}), nil)
		for st, codes := range failures(op) {
			names := make([]any, len(codes))
			text := make([]string, len(codes))
			for i, c := range codes {
				names[i], text[i] = string(c), "`"+string(c)+"`"
			}
			r := openapi3.NewResponse().WithJSONSchemaRef(envRef).
				WithDescription(http.StatusText(st) + ": `error.code` is " + strings.Join(text, ", "))
			r.Extensions = map[string]any{ErrorCodesExtension: names}
			// A count quota's 429 alone has no Retry-After: only a deletion
			// or the operator makes room. A key's 429 has one: the rate
			// limit's refill, or the next month for requestsPerMonth.
			if st == http.StatusTooManyRequests && slices.Contains(codes, pmapi.CodeRateLimited) {
				r.Headers = rateLimitHeaders()
				r.Headers["Retry-After"] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
					Description: "Seconds until a request will be allowed: the rate limit's refill " +
						"(RATE_LIMITED), or the start of the next UTC month (QUOTA_EXCEEDED of requestsPerMonth)",
					Schema: openapi3.NewSchemaRef("", openapi3.NewIntegerSchema()),
				}}}
			}
			o.AddResponse(st, r)
		}
	}
	o.Responses.Set("default", def)
	return nil
}

// failures derives the error codes op can answer, by status, from what it
// does: its credentials, its input, whether it is an Idempotent create, and
// what it declares itself (Fails: a state machine, a gate, a URL guard).
func failures(op Operation) map[int][]pmapi.Code {
	// Every route reads its query (saneQuery refuses text that is not UTF-8).
	codes := []pmapi.Code{pmapi.CodeValidation}
	switch op.Auth {
	case AuthKey:
		codes = append(codes, pmapi.CodeUnauthenticated, pmapi.CodeInvalidToken, pmapi.CodeTokenExpired,
			pmapi.CodeAppDisabled, pmapi.CodeWorkspaceSuspended, pmapi.CodeRateLimited,
			// The workspace's requestsPerMonth quota (quota.MonthGuard).
			pmapi.CodeQuotaExceeded)
		if op.Scope != "" || op.ScopeInHandler {
			codes = append(codes, pmapi.CodeInsufficientScope)
		}
	case AuthSession:
		codes = append(
			codes,
			pmapi.CodeUnauthenticated,
			pmapi.CodeInvalidToken,
			pmapi.CodeTokenExpired,
			pmapi.CodeWorkspaceSuspended,
		)
	case AuthAdmin:
		// Without an operator token configured the admin API is 404.
		codes = append(codes, pmapi.CodeUnauthenticated, pmapi.CodeInvalidToken, pmapi.CodeNotFound)
	}
	if op.Body != nil {
		// A body declared as anything but JSON is refused before it is read.
		codes = append(codes, pmapi.CodePayloadTooLarge, pmapi.CodeUnsupportedMedia)
	}
	// Ids in the path, the query or the body name rows that may be absent or
	// another workspace's.
	if len(op.pathParams()) > 0 || op.Body != nil || op.Query != nil {
		codes = append(codes, pmapi.CodeNotFound)
	}
	if op.Idempotent {
		codes = append(codes, pmapi.CodeConflict, pmapi.CodeIdempotencyReused)
	}
	if op.IfMatch {
		codes = append(codes, pmapi.CodePreconditionFailed)
	}
	codes = append(codes, op.Fails...)
	out := map[int][]pmapi.Code{}
	for _, c := range codes {
		st := StatusOf(c)
		if st >= 500 || slices.Contains(out[st], c) {
			continue
		}
		out[st] = append(out[st], c)
	}
	for st := range out {
		slices.Sort(out[st])
	}
	return out
}

// DeclaredCodes returns the codes op declares for status in doc, and whether
// it declares that status at all: what apitest checks each error answer by.
func DeclaredCodes(o *openapi3.Operation, status int) ([]string, bool) {
	r := o.Responses.Status(status)
	if r == nil || r.Value == nil {
		return nil, false
	}
	raw, ok := r.Value.Extensions[ErrorCodesExtension].([]any)
	if !ok {
		return nil, true
	}
	out := make([]string, len(raw))
	for i, v := range raw {
		out[i] = fmt.Sprint(v)
	}
	return out, true
}
