package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// validator is implemented by request bodies with rules beyond their JSON types.
type validator interface{ Validate() error }

// decodeBody reads the JSON body into a T strictly: unknown fields, wrong types,
// trailing data and an empty body are VALIDATION_FAILED naming the field, never a
// 500. Then T's own Validate runs.
func decodeBody[T any](c *fiber.Ctx) (T, error) {
	var v T
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return v, pmapi.Errorf(pmapi.CodeValidation, "request body must be a JSON object")
	}
	if err := jsonContentType(c); err != nil {
		return v, err
	}
	if err := decodeJSON(body, &v); err != nil {
		return v, err
	}
	if val, ok := any(&v).(validator); ok {
		if err := val.Validate(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// decodeOptionalBody is decodeBody for operations whose body may be left out.
func decodeOptionalBody[T any](c *fiber.Ctx) (T, error) {
	if len(bytes.TrimSpace(c.Body())) == 0 {
		var v T
		if val, ok := any(&v).(validator); ok {
			return v, val.Validate()
		}
		return v, nil
	}
	return decodeBody[T](c)
}

func decodeJSON(body []byte, into any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return pmapi.Errorf(pmapi.CodeValidation, "request body must be a JSON object")
	}
	// encoding/json would store invalid UTF-8 and lone surrogates as U+FFFD,
	// and PostgreSQL text cannot hold NUL: refuse all three here.
	if problem := badText(body); problem != "" {
		field := badTextField(body)
		return pmapi.Invalid(field, "%s %s", field, problem)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		jerr := jsonError(err)
		if e := pmapi.AsError(jerr); e.Details["field"] == nil {
			if field := locateBadField(body, into); field != "" {
				return pmapi.Invalid(
					field,
					"%s has the wrong type or format (timestamps are RFC 3339, like 2026-01-31T09:00:00Z)",
					field,
				)
			}
		}
		return jerr
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return pmapi.Errorf(pmapi.CodeValidation, "request body has data after the JSON object")
	}
	if field := outOfRangeTime(reflect.ValueOf(into), ""); field != "" {
		return pmapi.Invalid(field, "%s must fall within the years 0001 to 9999, also in UTC", field)
	}
	return nil
}

// jsonError explains a decoding failure in terms of the request's fields.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var fieldErr *pmapi.Error
	switch {
	case errors.As(err, &fieldErr):
		return fieldErr
	case errors.As(err, &syntax):
		return pmapi.Errorf(pmapi.CodeValidation, "malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return pmapi.Errorf(pmapi.CodeValidation, "request body must be a JSON object")
		}
		return pmapi.Invalid(field, "%s must be %s", field, jsonKind(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return pmapi.Errorf(pmapi.CodeValidation, "malformed JSON: unexpected end of input")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return pmapi.Invalid(field, "unknown field %q", field)
	}
	return pmapi.Errorf(pmapi.CodeValidation, "malformed JSON: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a number"
}

// cursor is the decoded form of the opaque nextCursor: which list it belongs to
// and the sort key of the last item served.
type cursor struct {
	List  string `json:"l"`
	After string `json:"a"`
}

func encodeCursor(list, after string) string {
	b, _ := json.Marshal(cursor{List: list, After: after})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor rejects cursors that are malformed or were issued by another list.
func decodeCursor(list, raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	bad := pmapi.Invalid("cursor", "cursor is not one this list issued")
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return "", bad
	}
	var cur cursor
	if err := json.Unmarshal(b, &cur); err != nil || cur.List != list || cur.After == "" {
		return "", bad
	}
	return cur.After, nil
}

// bodyHas reports whether the JSON body names field at its top level, to tell
// "absent" (leave alone) from "null" (clear) in PATCH requests.
func bodyHas(c *fiber.Ctx, field string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Body(), &m) != nil {
		return false
	}
	_, ok := m[field]
	return ok
}

// locateBadField finds which top-level field of body fails to decode into its Go
// type, for errors (such as a malformed timestamp) that encoding/json reports
// without naming the field.
func locateBadField(body []byte, into any) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	t := reflect.TypeOf(into)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	var check func(t reflect.Type) string
	check = func(t reflect.Type) string {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if name := check(f.Type); name != "" {
					return name
				}
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			raw, ok := m[name]
			if name == "" || !ok {
				continue
			}
			if json.Unmarshal(raw, reflect.New(f.Type).Interface()) != nil {
				return name
			}
		}
		return ""
	}
	return check(t)
}

// saneQuery refuses query parameters PostgreSQL cannot store or compare (text
// with a NUL character or that is not UTF-8 would otherwise fail inside the
// database as a 500), and a parameter given twice: every parameter is one
// value, and which of two a server reads differs from server to server.
func saneQuery(c *fiber.Ctx) error {
	var bad, twice string
	seen := map[string]bool{}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if bad == "" && (!utf8.Valid(v) || bytes.IndexByte(v, 0) >= 0 || !utf8.Valid(k)) {
			bad = string(k)
		}
		if twice == "" && seen[string(k)] {
			twice = string(k)
		}
		seen[string(k)] = true
	})
	if bad != "" {
		if !utf8.ValidString(bad) {
			bad = "query"
		}
		return pmapi.Invalid(bad, "%s must be UTF-8 text without NUL characters", bad)
	}
	if twice != "" {
		return pmapi.Invalid(twice, "%s is given more than once", twice)
	}
	return c.Next()
}

// badTextField names the top-level field whose JSON text badText refuses.
func badTextField(body []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil {
		for k, v := range m {
			if badText(v) != "" {
				return k
			}
		}
	}
	return "body"
}
