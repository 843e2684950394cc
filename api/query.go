package api

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// IDQuery documents a detail route's one parameter, the `id` its handler
// reads (required in the document; an absent one is looked up and not found).
type IDQuery struct {
	ID string `query:"id" required:"true"`
}

// DecodeQuery reads the query parameters into a T from the same struct tags
// the OpenAPI document is built from, so the two cannot disagree:
//
//	query:"name"               the parameter (fields without it are skipped)
//	enum:"A,B"                 a string must be one of these
//	maxLength:"200"            a string has at most this many characters
//	minimum, maximum, default  bounds and default of an int
//	id:"project"               a *uuid.UUID given as the id of that noun,
//	                           with its prefix from resource/ids (prj_...)
//	prefix:"whk_" noun:"subscription"  the same with the prefix spelled out,
//	                           for ids resource/ids does not hold
//
// A *uuid.UUID without either is a bare UUID of a user.
//
// bool reads true/false and *time.Time an RFC 3339 timestamp or a date (its
// midnight UTC). An empty text value is an absent one. A value that does not fit
// is 400 VALIDATION_FAILED naming the parameter, and so is an empty value of a
// parameter that is not text (`limit=`): it cannot be the number or id meant. `required` is the document's
// word only: an absent id is looked up and not found (404), as a wrong one.
func DecodeQuery[T any](c *fiber.Ctx) (T, error) {
	var v T
	args := c.Context().QueryArgs()
	err := decodeQueryInto(reflect.ValueOf(&v).Elem(), func(name string) (string, bool) {
		return c.Query(name), args.Has(name)
	})
	return v, err
}

var timeType = reflect.TypeOf(time.Time{})

func decodeQueryInto(v reflect.Value, get func(string) (string, bool)) error {
	fields := queryFields(v.Type())
	for i := range fields {
		f := &fields[i]
		raw, given := get(f.name)
		if raw == "" && given && f.kind != reflect.String {
			return pmapi.Invalid(f.name, "%s is given without a value", f.name)
		}
		if raw == "" {
			raw = f.def
		}
		if raw == "" {
			continue
		}
		if err := decodeParam(v.FieldByIndex(f.index), f, raw); err != nil {
			return err
		}
	}
	return nil
}

// A queryField is a query parameter's field with its tags read: once per
// type, not per request, where reading them was about 1.4 µs of a list page
// in pmapi serve (docs/performance.md, "Where a list page's CPU goes").
type queryField struct {
	index        []int // the field's, through embedded structs
	kind         reflect.Kind
	name, def    string
	tag          reflect.StructTag
	enum         []string
	maxLen       int
	hasMaxLen    bool
	lo, hi       int
	hasLo, hasHi bool
}

// queryFieldsOf holds each query struct's []queryField by its type.
var queryFieldsOf sync.Map

// queryFields are t's tagged fields, embedded structs' in their place.
func queryFields(t reflect.Type) []queryField {
	if f, ok := queryFieldsOf.Load(t); ok {
		return f.([]queryField)
	}
	var out []queryField
	var walk func(t reflect.Type, at []int)
	walk = func(t reflect.Type, at []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			index := append(slices.Clip(at), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, index)
				continue
			}
			name := f.Tag.Get("query")
			if name == "" {
				continue
			}
			q := queryField{index: index, kind: f.Type.Kind(), name: name, def: f.Tag.Get("default"), tag: f.Tag}
			if e := f.Tag.Get("enum"); e != "" {
				q.enum = strings.Split(e, ",")
			}
			m, err := strconv.Atoi(f.Tag.Get("maxLength"))
			q.maxLen, q.hasMaxLen = m, err == nil
			lo, loErr := strconv.Atoi(f.Tag.Get("minimum"))
			hi, hiErr := strconv.Atoi(f.Tag.Get("maximum"))
			q.lo, q.hasLo, q.hi, q.hasHi = lo, loErr == nil, hi, hiErr == nil
			out = append(out, q)
		}
	}
	walk(t, nil)
	queryFieldsOf.Store(t, out)
	return out
}

func decodeParam(dst reflect.Value, f *queryField, raw string) error {
	name := f.name
	switch {
	case dst.Kind() == reflect.String:
		if f.enum != nil && !slices.Contains(f.enum, raw) {
			return pmapi.Invalid(name, "%s must be one of %v", name, f.enum).With("allowed", f.enum)
		}
		if f.hasMaxLen && utf8.RuneCountInString(raw) > f.maxLen {
			return pmapi.Invalid(name, "%s must be valid text of at most %d characters", name, f.maxLen)
		}
		dst.SetString(raw)
	case dst.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil || (f.hasLo && n < f.lo) || (f.hasHi && n > f.hi) {
			if f.hasLo && f.hasHi {
				return pmapi.Invalid(name, "%s must be an integer from %d to %d", name, f.lo, f.hi)
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
		noun, prefix, err := queryIDKind(name, f.tag)
		if err != nil {
			return err
		}
		id, err := parseQueryID(prefix, noun, raw)
		if err != nil {
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

// queryIDKind is the noun and prefix of an id parameter: the `id` tag's noun
// and its prefix in resource/ids, the `prefix` and `noun` tags, or a user's
// bare UUID.
func queryIDKind(name string, tag reflect.StructTag) (noun, prefix string, err error) {
	if noun := tag.Get("id"); noun != "" {
		prefix, ok := pmapi.IDPrefixOf(noun)
		if !ok {
			return "", "", fmt.Errorf("api: query parameter %s is tagged id:%q, which resource/ids does not know",
				name, noun)
		}
		return noun, prefix, nil
	}
	if noun = tag.Get("noun"); noun == "" {
		noun = "user"
	}
	return noun, tag.Get("prefix"), nil
}

// checkQuery fails start-up on an operation whose query struct names an id
// kind resource/ids does not know, rather than its first request.
func checkQuery(op Operation) error {
	if op.Query == nil {
		return nil
	}
	var check func(t reflect.Type) error
	check = func(t reflect.Type) error {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if err := check(f.Type); err != nil {
					return err
				}
			} else if _, _, err := queryIDKind(f.Tag.Get("query"), f.Tag); err != nil {
				return fmt.Errorf("%w (operation %s)", err, op.ID)
			}
		}
		return nil
	}
	return check(reflect.TypeOf(op.Query))
}

func parseQueryID(prefix, noun, raw string) (uuid.UUID, error) {
	if prefix != "" {
		return pmapi.ParseID(prefix, raw, noun)
	}
	return uuid.Parse(raw)
}
