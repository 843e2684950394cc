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

// TestEveryByteInEveryPlaceOfAWord: plainPrefix judges eight bytes at once
// and tests pairs of specials ('"' and '&', '<' and '>') with one mask, so
// each byte value is tried at each place of two words, among plain text,
// against encoding/json: a neighbour of a special (';', '=', '?', '$')
// taken for one, or a special missed, fails here.
func TestEveryByteInEveryPlaceOfAWord(t *testing.T) {
	for c := range 256 {
		for at := range 16 {
			b := []byte("plain words, too")
			b[at] = byte(c)
			want, _ := json.Marshal(string(b))
			if got := String(nil, string(b)); string(got) != string(want) {
				t.Fatalf("String(%q) = %s, encoding/json %s", b, got, want)
			}
		}
	}
}

// FuzzTime: every time, in UTC and at an offset, comes out as its
// MarshalJSON writes it.
func FuzzTime(f *testing.F) {
	f.Add(int64(0), int64(0), 0)
	f.Add(int64(1795590000), int64(120_000_000), 3600)
	f.Add(int64(-62135596800), int64(1), -1800)
	f.Add(int64(253402300799), int64(999_999_999), 0)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", offset%86400))
		for _, v := range []time.Time{tm, tm.UTC()} {
			want, err := json.Marshal(v)
			if err != nil {
				return // a year MarshalJSON refuses; pmapi's columns have none
			}
			if got := Time(nil, v); string(got) != string(want) {
				t.Fatalf("Time(%v) = %s, encoding/json %s", v, got, want)
			}
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
		want, _ := json.Marshal(tm)
		if got := Time(nil, tm); string(got) != string(want) {
			t.Errorf("Time(%v) = %s, want %s", tm, got, want)
		}
	}
	cases := []struct {
		got  []byte
		want any
	}{
		{UUID(nil, &id), id},
		{UUID(nil, nil), (*uuid.UUID)(nil)},
		{StringPtr(nil, &text), text},
		{StringPtr(nil, nil), (*string)(nil)},
		{Int(nil, -42), -42},
	}
	for _, c := range cases {
		want, _ := json.Marshal(c.want)
		if string(c.got) != string(want) {
			t.Errorf("got %s, want %s", c.got, want)
		}
	}
}

// BenchmarkTime: a time the way the list page writes it, against its
// MarshalJSON, which goccy/go-json called per time (go test -run '^$' -bench
// Time ./internal/jsonw/). A digit-by-digit formatter of a time.Time
// measured 52 to 66 ns against AppendFormat's 47 and was not kept;
// TimeMicros starts from the wire's microseconds instead, with no time.Time
// to build and two digits a division.
func BenchmarkTime(b *testing.B) {
	tm := time.Date(2026, 11, 25, 6, 17, 9, 583_205_000, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("Time", func(b *testing.B) {
		for b.Loop() {
			buf = Time(buf[:0], tm)
		}
	})
	b.Run("TimeMicros", func(b *testing.B) {
		us := tm.UnixMicro()
		for b.Loop() {
			buf = TimeMicros(buf[:0], us)
		}
	})
	b.Run("MarshalJSON", func(b *testing.B) {
		for b.Loop() {
			buf, _ = tm.MarshalJSON()
		}
	})
}

// FuzzTimeMicros: every microsecond of the years 0 to 9999 comes out as
// Time writes it in UTC (so as encoding/json does), alone and through a
// Date that remembers another day's date.
func FuzzTimeMicros(f *testing.F) {
	for _, us := range []int64{
		0, -1, 1, 1_000_000, 951_782_400_000_000, MinMicros, MaxMicros, 1795590000_120_000, -62135596800_000_001,
	} {
		f.Add(us)
	}
	f.Fuzz(func(t *testing.T, us int64) {
		if us < MinMicros || us > MaxMicros {
			us = MinMicros + (us%(MaxMicros-MinMicros)+(MaxMicros-MinMicros))%(MaxMicros-MinMicros)
		}
		want := Time(nil, time.UnixMicro(us).UTC())
		if got := TimeMicros(nil, us); string(got) != string(want) {
			t.Fatalf("TimeMicros(%d) = %s, Time %s", us, got, want)
		}
		// Through one Date: the same day again, then hours and days
		// away, each against the date it remembers.
		var d Date
		for _, v := range []int64{us, us + 1, us + 3_600_000_000*7, us - 86_400_000_000, us + 40*86_400_000_000, us} {
			if v < MinMicros || v > MaxMicros {
				continue
			}
			if got, want := d.TimeMicros(nil, v), Time(nil, time.UnixMicro(v).UTC()); string(got) != string(want) {
				t.Fatalf("Date.TimeMicros(%d) = %s, Time %s", v, got, want)
			}
		}
	})
}

// BenchmarkString: a task's title and description, plain text with a few
// marks, as a list page carries fifty of.
func BenchmarkString(b *testing.B) {
	s := "Calibrate the torque sensors on line 3 before the supplier audit; " +
		"check the seals, log each reading, and flag anything over 4% drift to the quality lead."
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = String(buf[:0], s)
	}
}
