package api

import (
	"bytes"
	"net/url"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

type fuzzedBody struct {
	Name  string     `json:"name"`
	Tags  []string   `json:"tags"`
	Due   *time.Time `json:"dueDate"`
	Inner struct {
		At   time.Time `json:"at"`
		Text *string   `json:"text"`
	} `json:"inner"`
}

// FuzzDecodeJSON holds the body decoder to its promises for any input: no
// panic; a refusal is VALIDATION_FAILED; what it accepts is UTF-8 text that
// carries U+FFFD only where the client sent one (never a silent
// replacement), no NUL, and times within the years 0001 to 9999.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"a"}`, `{"name":"\ud83d\ude00"}`, `{"name":"\ud800"}`, `{"name":"\udc00\ud800"}`, `{"name":"\\ud800"}`,
		"{\"name\":\"\xff\"}", `{"name":"\ufffd"}`, "{\"name\":\"\xef\xbf\xbd\"}", `{"name":"a\u0000"}`,
		`{"tags":["\ud800x"]}`, `{"dueDate":"0000-01-01T00:00:00+14:00"}`, `{"dueDate":"9999-12-31T23:00:00-05:00"}`,
		`{"inner":{"at":"0001-01-01T00:00:00Z"}}`, `{"inner":{"text":"\uDBFF\uDFFF"}}`, `{"name":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v fuzzedBody
		err := decodeJSON(body, &v)
		if err != nil {
			if code := pmapi.ErrorCode(err); code != pmapi.CodeValidation {
				t.Fatalf("%q refused as %s: %v", body, code, err)
			}
			return
		}
		mayHaveFFFD := bytes.Contains(body, []byte("\xef\xbf\xbd")) || bytes.Contains(bytes.ToLower(body), []byte("fffd"))
		texts := append([]string{v.Name}, v.Tags...)
		if v.Inner.Text != nil {
			texts = append(texts, *v.Inner.Text)
		}
		for _, s := range texts {
			if !utf8.ValidString(s) || bytes.IndexByte([]byte(s), 0) >= 0 ||
				(!mayHaveFFFD && bytes.ContainsRune([]byte(s), utf8.RuneError)) {
				t.Fatalf("%q accepted as %q", body, s)
			}
		}
		for _, at := range []*time.Time{v.Due, &v.Inner.At} {
			if at != nil && !at.IsZero() &&
				(at.Year() < 1 || at.Year() > 9999 || at.UTC().Year() < 1 || at.UTC().Year() > 9999) {
				t.Fatalf("%q accepted with time %v", body, at)
			}
		}
	})
}

type fuzzedQuery struct {
	ListQuery
	Status  string     `query:"status" enum:"OPEN,DONE"`
	Q       string     `query:"q" maxLength:"10"`
	Archive bool       `query:"includeArchived"`
	After   *time.Time `query:"after"`
	Owner   *uuid.UUID `query:"ownerId"`
	Project *uuid.UUID `query:"projectId" id:"project"`
}

// FuzzDecodeQuery: for any query string, DecodeQuery's reading either fills
// the struct within its tags' bounds or refuses with VALIDATION_FAILED naming
// a parameter; it never panics.
func FuzzDecodeQuery(f *testing.F) {
	for _, s := range []string{
		"limit=", "limit=0", "limit=201", "limit=5&status=OPEN", "status=open", "q=%00", "includeArchived=",
		"after=2026-01-01", "after=0000-01-01T00:00:00Z", "ownerId=x", "projectId=prj_0",
		"q=" + url.QueryEscape("ąąąąąąąąąąą"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		vals, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		var q fuzzedQuery
		err = decodeQueryInto(reflect.ValueOf(&q).Elem(), func(name string) (string, bool) {
			vs, ok := vals[name]
			if !ok {
				return "", false
			}
			return vs[0], true
		})
		if err != nil {
			if e := pmapi.AsError(err); e.Code != pmapi.CodeValidation || e.Details["field"] == nil {
				t.Fatalf("%q refused without naming a parameter: %v", raw, err)
			}
			return
		}
		if q.Limit < 1 || q.Limit > 200 || (q.Status != "" && q.Status != "OPEN" && q.Status != "DONE") ||
			utf8.RuneCountInString(q.Q) > 10 {
			t.Fatalf("%q accepted out of bounds: %+v", raw, q)
		}
	})
}
