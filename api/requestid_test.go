package api

import (
	"regexp"
	"strings"
	"testing"
)

// The id a server makes keeps its documented shape (docs/decisions/envelope-and-errors.md:
// "req_" and 20 base62), uses the whole alphabet and does not repeat.
func TestNewRequestIDShape(t *testing.T) {
	shape := regexp.MustCompile(`^req_[0-9A-Za-z]{20}$`)
	seen := make(map[string]bool)
	var used strings.Builder
	for range 20_000 {
		id := newRequestID()
		if !shape.MatchString(id) || !saneRequestID.MatchString(id) {
			t.Fatalf("%q is not req_ and 20 base62", id)
		}
		if seen[id] {
			t.Fatalf("%q made twice", id)
		}
		seen[id] = true
		if len(seen) <= 200 {
			used.WriteString(id[4:])
		}
	}
	for _, c := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" {
		if !strings.ContainsRune(used.String(), c) {
			t.Errorf("%q never drawn in 4,000 characters", c)
		}
	}
}
