// Package madeup makes up words for seeded text: the search plan test's and
// the benchmark's. Random letters give words whose trigrams are as varied as
// real words', which a handful of repeated real words are not (a search then
// matches a large part of the table and no index is worth reading).
package madeup

import "math/rand/v2"

// Words returns n words of 5 to 9 letters, the same ones for the same seed.
func Words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 18))
	w := make([]string, n)
	for i := range w {
		b := make([]byte, 5+r.IntN(5))
		for j := range b {
			b[j] = "abcdefghijklmnoprstuvwy"[r.IntN(23)]
		}
		w[i] = string(b)
	}
	return w
}
