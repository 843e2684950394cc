package apitest

import (
	"strings"
	"testing"
)

// CommonSeeds are the bodies every fuzzed endpoint starts from besides its
// own: empty, the wrong JSON types, truncated and trailing JSON, a NUL, a
// direction override, a number beyond float64.
var CommonSeeds = []string{
	``, `{}`, `null`, `[]`, `"x"`, `{"a":1}`, `{"name":`, "{\"name\":\"\x00\"}", `{"name":"` + "\u202e" + `"}`,
	`{"name":"x"}{}`, `{"id":null}`, `{"name":1e309}`, `{"name":["x"]}`,
}

// FuzzBody drives one endpoint of the real app with arbitrary request bodies:
// whatever arrives, the answer is a documented status below 500 with the
// envelope (Do validates it against the document), and nothing panics.
// prepare, when not nil, may create what the seeds refer to and returns what
// replaces the placeholder "$ID" in seeds. pathOf, when given, supplies the
// path after prepare ran (for paths with ids).
func FuzzBody(f *testing.F, method, path string, seeds []string, prepare func(t testing.TB, tn *Tenant) string,
	pathOf ...func() string) {
	f.Helper()
	// Unlimited: the rate limit runs before decoding, so past the first minute's
	// allowance every input would test the 429 path and no decoder.
	env := New(f, func(d *Config) { d.RateLimitPerMinute = 1_000_000_000 })
	tn := env.NewTenant(f)
	id := ""
	if prepare != nil {
		id = prepare(f, tn)
	}
	for _, s := range seeds {
		f.Add([]byte(strings.ReplaceAll(s, "$ID", id)))
	}
	if len(pathOf) > 0 {
		path = pathOf[0]()
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := tn.Do(t, method, path, body)
		if r.Status >= 500 {
			t.Fatalf("%s %s answered %d for %q: %s", method, path, r.Status, body, r.Raw)
		}
	})
}
