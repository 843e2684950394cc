package jsonw

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
)

// FuzzString: every string comes out as encoding/json writes it; the seeds
// cover each escape (quotes, controls, \b and \f, HTML, U+2028, broken UTF-8).
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", `"q" \ /`, "\b\f\n\r\t\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"\u2028\u2029", "caf\xc3", "\xff\xfe", "é 日本 🚀", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

func TestValuesAsEncodingJSON(t *testing.T) {
	id := uuid.MustParse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
	text := "x"
	for _, tm := range []time.Time{
		time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 25, 6, 0, 0, 120_000_000, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 123_456_789, time.FixedZone("x", 3600)),
	} {
		want, _ := json.Marshal(tm.UTC())
		if got := TimeUTC(nil, &tm); string(got) != string(want) {
			t.Errorf("TimeUTC(%v) = %s, want %s", tm, got, want)
		}
		want, _ = json.Marshal(tm)
		if got := TimePtr(nil, &tm); string(got) != string(want) {
			t.Errorf("TimePtr(%v) = %s, want %s", tm, got, want)
		}
	}
	cases := []struct {
		got  []byte
		want any
	}{
		{TimeUTC(nil, nil), (*time.Time)(nil)},
		{TimePtr(nil, nil), (*time.Time)(nil)},
		{UUID(nil, &id), id},
		{UUID(nil, nil), (*uuid.UUID)(nil)},
		{StringPtr(nil, &text), text},
		{StringPtr(nil, nil), (*string)(nil)},
		{Int(nil, -42), -42},
		{Bool(nil, true), true},
	}
	for _, c := range cases {
		want, _ := json.Marshal(c.want)
		if string(c.got) != string(want) {
			t.Errorf("got %s, want %s", c.got, want)
		}
	}
}
