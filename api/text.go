package api

import (
	"mime"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// badText says what is wrong with the text of a JSON document, or "" when
// nothing is: bytes that are not UTF-8, a \u escape of a lone surrogate (half
// of a UTF-16 pair without its other half), or of NUL. encoding/json turns the
// first two into U+FFFD without a word, and PostgreSQL text cannot hold NUL.
func badText(doc []byte) string {
	if !utf8.Valid(doc) {
		return "must be UTF-8 text"
	}
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' || i+1 >= len(doc) {
			continue
		}
		i++ // the escaped character; a `\\` is skipped whole
		if doc[i] != 'u' {
			continue
		}
		r, ok := hex4(doc, i+1)
		if !ok {
			continue // malformed: the decoder reports it
		}
		i += 4
		switch {
		case r == 0:
			return "must not contain NUL (\\u0000) characters"
		case utf16.IsSurrogate(r):
			low, ok := rune(0), false
			if i+2 < len(doc) && doc[i+1] == '\\' && doc[i+2] == 'u' {
				low, ok = hex4(doc, i+3)
			}
			if r >= 0xdc00 || !ok || utf16.DecodeRune(r, low) == utf8.RuneError {
				return "must not contain lone UTF-16 surrogates (\\ud800 to \\udfff without their pair)"
			}
			i += 6
		}
	}
	return ""
}

// hex4 reads the four hex digits of a \u escape starting at doc[at].
func hex4(doc []byte, at int) (rune, bool) {
	if at+4 > len(doc) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(doc[at:at+4]), 16, 16)
	return rune(n), err == nil
}

// jsonContentType refuses a body declared as something other than JSON:
// application/json or any +json type (RFC 6839). A body without a
// Content-Type is read as JSON: Go's http.NewRequest and several other
// clients send none for a raw body (docs/decisions/envelope-and-errors.md).
func jsonContentType(c *fiber.Ctx) error {
	declared := c.Get(fiber.HeaderContentType)
	if declared == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(declared)
	if err == nil &&
		(mt == fiber.MIMEApplicationJSON || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return pmapi.Errorf(pmapi.CodeUnsupportedMedia,
		"the request body must be JSON (Content-Type: application/json), not %q", declared).
		With("contentType", declared)
}

// outOfRangeTime finds a timestamp of a decoded request outside the years
// 0001 to 9999, in its own offset or in UTC, and names its field (dotted and
// indexed below the top level). PostgreSQL refuses year 0 and the JSON of a
// time past 9999 cannot be written, so the event of a change would fail after
// its write: refuse it before.
func outOfRangeTime(v reflect.Value, field string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == timeType:
		t := v.Interface().(time.Time)
		if y, u := t.Year(), t.UTC().Year(); y < 1 || y > 9999 || u < 1 || u > 9999 {
			return field
		}
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			sub := joinField(field, name)
			if f.Anonymous {
				sub = field
			}
			if bad := outOfRangeTime(v.Field(i), sub); bad != "" {
				return bad
			}
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if bad := outOfRangeTime(v.Index(i), field+"["+strconv.Itoa(i)+"]"); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
