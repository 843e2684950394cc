package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/event"
)

// APIVersion is info.version of the document, as the spec fixes it.
const APIVersion = "0.1.0"

// Security scheme names. The first two are the spec's API-key schemes.
const (
	schemeAuthorization = "ApiKeyAuth"
	schemeClientID      = "ClientId"
	schemeSession       = "SessionCookie"
	schemeAdmin         = "AdminToken"
)

// BuildDocument describes ops as an OpenAPI 3.0 document. Schemas are generated
// by kin-openapi's openapi3gen from the same Go types the handlers decode and
// encode; struct tags add what Go types cannot say (enums, docs, examples).
func BuildDocument(ops []Operation, events []event.Type) (*openapi3.T, error) {
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{
			Title:   "pmapi — project-management open platform API",
			Version: APIVersion,
			Description: "Public API of a multi-tenant project-management product. Success responses are " +
				"`{\"success\": true, \"data\": ...}`; failures are `{\"success\": false, \"error\": {code, message, details, requestId}}`. " +
				"Every response carries X-Request-Id.",
		},
		Servers: openapi3.Servers{{URL: "/"}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:         openapi3.Schemas{},
			SecuritySchemes: securitySchemes(),
			Responses:       openapi3.ResponseBodies{},
		},
	}
	gen := openapi3gen.NewGenerator(
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.SchemaCustomizer(customizeSchema),
		openapi3gen.CreateTypeNameGenerator(typeName),
	)
	schemaOf := func(v any) (*openapi3.SchemaRef, error) {
		return gen.NewSchemaRefForValue(v, doc.Components.Schemas)
	}
	errRef, err := schemaOf(ErrorEnvelope{})
	if err != nil {
		return nil, err
	}
	doc.Components.Responses["Error"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("Failure; `error.code` is one of the documented codes").
		WithJSONSchemaRef(errRef)}

	tags := map[string]bool{}
	for _, op := range ops {
		o := openapi3.NewOperation()
		o.OperationID = op.ID
		o.Summary = op.Summary
		o.Description = op.Description
		o.Tags = []string{op.Tag}
		tags[op.Tag] = true
		for _, name := range op.pathParams() {
			o.AddParameter(openapi3.NewPathParameter(name).WithSchema(openapi3.NewStringSchema()))
		}
		if op.Query != nil {
			addQueryParams(o, reflect.TypeOf(op.Query))
		}
		o.Security = security(op.Auth)
		if op.Idempotent {
			p := openapi3.NewHeaderParameter(headerIdempotencyKey).WithSchema(openapi3.NewStringSchema().WithMinLength(1).WithMaxLength(255))
			p.Description = "Makes the create safe to retry for 24 hours: the same key with the same body replays the first " +
				"response (with Idempotent-Replayed: true), with another body is 422 IDEMPOTENCY_KEY_REUSED, and while the " +
				"first request still runs is 409 CONFLICT"
			if op.SecretField != "" {
				p.Description += ". The `" + op.SecretField + "` is shown only once: a replay answers 409 CONFLICT with " +
					"details.id naming what the first request created (regenerate or rotate it if the first answer was lost)"
			}
			o.AddParameter(p)
		}
		if op.Body != nil {
			ref, err := schemaOf(op.Body)
			if err != nil {
				return nil, fmt.Errorf("%s body: %w", op.ID, err)
			}
			rb := openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(ref)
			if op.Form {
				rb = openapi3.NewRequestBody().WithRequired(true).
					WithSchemaRef(ref, []string{"application/x-www-form-urlencoded", "application/json"})
			}
			o.RequestBody = &openapi3.RequestBodyRef{Value: rb}
		}
		desc := http.StatusText(op.Status)
		resp := openapi3.NewResponse().WithDescription(desc)
		if op.Result != nil {
			ref, err := schemaOf(op.Result)
			if err != nil {
				return nil, fmt.Errorf("%s result: %w", op.ID, err)
			}
			if !op.Raw {
				ref = envelopeOf(ref)
			}
			resp = resp.WithJSONSchemaRef(ref)
		}
		if op.HTML {
			resp = resp.WithContent(openapi3.Content{"text/html": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())})
		}
		if op.Auth == AuthKey {
			resp.Headers = rateLimitHeaders()
		}
		o.AddResponse(op.Status, resp)
		switch {
		case op.HTML:
			for _, st := range []int{400, 401, 403, 404, 429} {
				o.AddResponse(st, openapi3.NewResponse().WithDescription(http.StatusText(st)).
					WithContent(openapi3.Content{"text/html": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())}))
			}
			o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		case len(op.Errors) > 0:
			for st, body := range op.Errors {
				ref, err := schemaOf(body)
				if err != nil {
					return nil, err
				}
				o.AddResponse(st, openapi3.NewResponse().WithDescription(http.StatusText(st)).WithJSONSchemaRef(ref))
			}
			o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		default:
			o.Responses.Set("default", &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		}
		doc.AddOperation(op.Path, op.Method, o)
	}
	// Event payloads: each is a component schema, and x-webhooks maps every
	// event type to the schema of its `data` and of the whole request body
	// (WebhookBody, whose data that schema narrows).
	if _, err := schemaOf(event.Delivery{}); err != nil {
		return nil, fmt.Errorf("webhook body: %w", err)
	}
	body := map[string]any{"$ref": "#/components/schemas/" + schemaName(event.Delivery{})}
	hooks := map[string]any{}
	for _, t := range events {
		if _, err := schemaOf(t.Payload); err != nil {
			return nil, fmt.Errorf("event %s payload: %w", t.Name, err)
		}
		hooks[t.Name] = map[string]any{
			"description": t.Description,
			"body":        body,
			"data":        map[string]any{"$ref": "#/components/schemas/" + schemaName(t.Payload)},
		}
	}
	doc.Extensions = map[string]any{"x-webhooks": hooks}

	names := make([]string, 0, len(tags))
	for t := range tags {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t})
	}
	return reload(doc)
}

// reload round-trips the generated document through kin-openapi's loader, which
// resolves every $ref, and validates it as OpenAPI 3: a malformed document fails
// at start-up, not in an integrator's code generator.
func reload(doc *openapi3.T) (*openapi3.T, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	loaded, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load generated document: %w", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("generated document is not valid OpenAPI: %w", err)
	}
	return loaded, nil
}

func envelopeOf(data *openapi3.SchemaRef) *openapi3.SchemaRef {
	s := openapi3.NewObjectSchema().
		WithProperty("success", &openapi3.Schema{Type: &openapi3.Types{"boolean"}, Enum: []any{true}}).
		WithPropertyRef("data", data)
	s.Required = []string{"success", "data"}
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	return openapi3.NewSchemaRef("", s)
}

func securitySchemes() openapi3.SecuritySchemes {
	return openapi3.SecuritySchemes{
		schemeAuthorization: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("header").WithName("Authorization").
			WithDescription("An API key (`pmk_...`) as the bare value, or `Bearer <OAuth access token>`")},
		schemeClientID: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("header").WithName("X-Client-ID").
			WithDescription("The app's client id (`pm_cli_...`), or the workspace's console client id")},
		schemeSession: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("cookie").WithName("sid").
			WithDescription("A console user's session, sent with X-Client-ID")},
		schemeAdmin: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("http").WithScheme("bearer").
			WithDescription("The operator token, PMAPI_ADMIN_TOKEN")},
	}
}

func security(a Auth) *openapi3.SecurityRequirements {
	req := openapi3.NewSecurityRequirement()
	switch a {
	case AuthAdmin:
		req.Authenticate(schemeAdmin)
	case AuthSession:
		req.Authenticate(schemeClientID).Authenticate(schemeSession)
	case AuthKey:
		req.Authenticate(schemeClientID).Authenticate(schemeAuthorization)
	default:
		return &openapi3.SecurityRequirements{}
	}
	return &openapi3.SecurityRequirements{req}
}

func addQueryParams(o *openapi3.Operation, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			addQueryParams(o, f.Type)
			continue
		}
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		var s *openapi3.Schema
		switch f.Type.Kind() {
		case reflect.Int:
			s = openapi3.NewIntegerSchema()
		case reflect.Bool:
			s = openapi3.NewBoolSchema()
		default:
			s = openapi3.NewStringSchema()
		}
		_ = customizeSchema(name, f.Type, f.Tag, s)
		p := openapi3.NewQueryParameter(name).WithSchema(s)
		p.Description = f.Tag.Get("doc")
		p.Required = f.Tag.Get("required") == "true"
		o.AddParameter(p)
	}
}

// customizeSchema applies the struct tags openapi3gen does not read:
//
//	doc:"..."      description
//	enum:"A,B"     allowed values
//	example:"..."  an example value
//	format:"..."   string format (date, uri, ...)
//	minimum:"1" maximum:"5"     bounds of a number
//	minItems:"1" maxItems:"100" bounds of an array's length
//	nullable:"false"            an optional field (a pointer) that must not be null
//
// and, on structs, marks every field without `omitempty` as required and closes
// the object to unknown properties, so tests that validate responses against the
// document catch any field that drifts from it.
func customizeSchema(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	if t == uuidType {
		*s = openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "uuid", Nullable: s.Nullable}
	}
	if t == rawJSONType {
		// Raw JSON a type's own schema describes (the webhook body's data).
		*s = openapi3.Schema{Type: &openapi3.Types{"object"}, AdditionalProperties: openapi3.AdditionalProperties{Has: new(true)}}
	}
	if d := tag.Get("doc"); d != "" {
		s.Description = d
	}
	if e := tag.Get("enum"); e != "" {
		s.Enum = nil
		for _, v := range strings.Split(e, ",") {
			switch v {
			case "true":
				s.Enum = append(s.Enum, true)
			case "false":
				s.Enum = append(s.Enum, false)
			default:
				s.Enum = append(s.Enum, v)
			}
		}
	}
	if ex := tag.Get("example"); ex != "" {
		s.Example = exampleFor(s, ex)
	}
	if f := tag.Get("format"); f != "" {
		s.Format = f
	}
	applyBounds(tag, s)
	if tag.Get("nullable") == "false" {
		s.Nullable = false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && s.Properties != nil {
		s.Required = nil
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(opts, "omitempty") {
				s.Required = append(s.Required, name)
			}
		}
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	}
	if t.Kind() == reflect.Map && s.AdditionalProperties.Schema != nil && s.AdditionalProperties.Schema.Value != nil &&
		s.AdditionalProperties.Schema.Value.Type == nil {
		// map[string]any: any JSON value.
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(true)}
	}
	return nil
}

// applyBounds reads the numeric and length bound tags. An absent tag fails to
// parse and leaves the schema unbounded.
// Like every tag, they also reach the schema of a slice's elements, hence the
// checks of the schema's type.
func applyBounds(tag reflect.StructTag, s *openapi3.Schema) {
	if s.Type == nil {
		return
	}
	if s.Type.Is("number") || s.Type.Is("integer") {
		if v, err := strconv.ParseFloat(tag.Get("minimum"), 64); err == nil {
			s.Min = &v
		}
		if v, err := strconv.ParseFloat(tag.Get("maximum"), 64); err == nil {
			s.Max = &v
		}
	}
	if s.Type.Is("array") {
		if v, err := strconv.ParseUint(tag.Get("minItems"), 10, 64); err == nil {
			s.MinItems = v
		}
		if v, err := strconv.ParseUint(tag.Get("maxItems"), 10, 64); err == nil {
			s.MaxItems = &v
		}
	}
}

// rateLimitHeaders documents what every key-authenticated answer carries.
func rateLimitHeaders() openapi3.Headers {
	h := func(desc string, schema *openapi3.Schema) *openapi3.HeaderRef {
		return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Description: desc, Schema: openapi3.NewSchemaRef("", schema)}}}
	}
	return openapi3.Headers{
		"X-RateLimit-Limit":     h("Requests allowed per minute for this credential", openapi3.NewIntegerSchema()),
		"X-RateLimit-Remaining": h("Requests left now", openapi3.NewIntegerSchema()),
		"X-RateLimit-Reset":     h("Unix time at which the allowance is full again", openapi3.NewIntegerSchema()),
		"RateLimit-Policy":      h(`IETF draft: "default";q=<limit>;w=60`, openapi3.NewStringSchema()),
		"RateLimit":             h(`IETF draft: "default";r=<remaining>;t=<seconds to full>`, openapi3.NewStringSchema()),
	}
}

// exampleFor reads an example tag: JSON for non-string schemas, the text itself
// for strings. An example that does not fit the schema is dropped (slice element
// schemas inherit their field's tag).
func exampleFor(s *openapi3.Schema, ex string) any {
	if s.Type == nil || s.Type.Is("string") {
		if strings.HasPrefix(ex, "[") {
			return nil
		}
		return ex
	}
	var v any
	if json.Unmarshal([]byte(ex), &v) != nil {
		return nil
	}
	if s.VisitJSON(v) != nil {
		return nil
	}
	return v
}

var (
	uuidType    = reflect.TypeOf(uuid.UUID{})
	rawJSONType = reflect.TypeOf(json.RawMessage{})
)

// typeName names component schemas: types of package api keep their names, a
// resource package's types are prefixed with the package (project.View becomes
// ProjectView) unless the name already starts with it (project.Project). A type
// with a SchemaName method names itself: one that moved out of package api
// keeps the name the document has always given it.
func typeName(t reflect.Type) string {
	if n, ok := reflect.Zero(t).Interface().(interface{ SchemaName() string }); ok {
		return n.SchemaName()
	}
	name := t.Name()
	pkg := t.PkgPath()
	base := pkg[strings.LastIndex(pkg, "/")+1:]
	if base == "" || base == "api" || base == "pmapi" {
		return name
	}
	prefix := strings.ToUpper(base[:1]) + base[1:]
	if strings.HasPrefix(name, prefix) {
		return name
	}
	return prefix + name
}

// schemaName is the component name of v's type.
func schemaName(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return typeName(t)
}
