package api

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// ListQuery documents the paging parameters every list shares.
type ListQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size, 1 to 200; default 50"`
	Cursor string `query:"cursor" doc:"nextCursor of the previous page"`
}

// DecodeQuery reads the query parameters into a T from the same struct tags
// the OpenAPI document is built from, so the two cannot disagree:
//
//	query:"name"               the parameter (fields without it are skipped)
//	enum:"A,B"                 a string must be one of these
//	maxLength:"200"            a string has at most this many characters
//	minimum, maximum, default  bounds and default of an int
//	prefix:"prj_" noun:"project"  a *uuid.UUID given as a prefixed id (noun
//	                           names it in errors); without prefix a bare UUID
//	                           of a user (or noun)
//
// bool reads true/false and *time.Time an RFC 3339 timestamp or a date (its
// midnight UTC). An empty value is an absent one. A value that does not fit
// is 400 VALIDATION_FAILED naming the parameter. `required` is the document's
// word only: an absent id is looked up and not found (404), as a wrong one.
func DecodeQuery[T any](c *fiber.Ctx) (T, error) {
	var v T
	err := decodeQueryInto(reflect.ValueOf(&v).Elem(), func(name string) string { return c.Query(name) })
	return v, err
}

var timeType = reflect.TypeOf(time.Time{})

func decodeQueryInto(v reflect.Value, get func(string) string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := decodeQueryInto(v.Field(i), get); err != nil {
				return err
			}
			continue
		}
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		raw := get(name)
		if raw == "" {
			raw = f.Tag.Get("default")
		}
		if raw == "" {
			continue
		}
		if err := decodeParam(v.Field(i), f.Tag, name, raw); err != nil {
			return err
		}
	}
	return nil
}

func decodeParam(dst reflect.Value, tag reflect.StructTag, name, raw string) error {
	switch {
	case dst.Kind() == reflect.String:
		if e := tag.Get("enum"); e != "" {
			allowed := strings.Split(e, ",")
			if !slices.Contains(allowed, raw) {
				return pmapi.Invalid(name, "%s must be one of %v", name, allowed).With("allowed", allowed)
			}
		}
		if m, err := strconv.Atoi(tag.Get("maxLength")); err == nil && utf8.RuneCountInString(raw) > m {
			return pmapi.Invalid(name, "%s must be valid text of at most %d characters", name, m)
		}
		dst.SetString(raw)
	case dst.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		lo, loErr := strconv.Atoi(tag.Get("minimum"))
		hi, hiErr := strconv.Atoi(tag.Get("maximum"))
		if err != nil || (loErr == nil && n < lo) || (hiErr == nil && n > hi) {
			if loErr == nil && hiErr == nil {
				return pmapi.Invalid(name, "%s must be an integer from %d to %d", name, lo, hi)
			}
			return pmapi.Invalid(name, "%s must be an integer", name)
		}
		dst.SetInt(int64(n))
	case dst.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return pmapi.Invalid(name, "%s must be true or false", name)
		}
		dst.SetBool(b)
	case dst.Type() == reflect.PointerTo(timeType):
		for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
			if ts, err := time.Parse(layout, raw); err == nil {
				dst.Set(reflect.ValueOf(&ts))
				return nil
			}
		}
		return pmapi.Invalid(name, "%s must be an RFC 3339 timestamp such as 2026-01-31T09:00:00Z, or a date", name)
	case dst.Type() == reflect.PointerTo(uuidType):
		id, err := parseQueryID(tag, raw)
		if err != nil {
			noun, prefix := tag.Get("noun"), tag.Get("prefix")
			if noun == "" {
				noun = "user"
			}
			if prefix != "" {
				return pmapi.Invalid(name, "%s must be a %s id (%s...)", name, noun, prefix)
			}
			return pmapi.Invalid(name, "%s must be a %s id", name, noun)
		}
		dst.Set(reflect.ValueOf(&id))
	default:
		panic("api: query parameter " + name + " has a type DecodeQuery does not read: " + dst.Type().String())
	}
	return nil
}

func parseQueryID(tag reflect.StructTag, raw string) (uuid.UUID, error) {
	if prefix := tag.Get("prefix"); prefix != "" {
		return pmapi.ParseID(prefix, raw, tag.Get("noun"))
	}
	return uuid.Parse(raw)
}
