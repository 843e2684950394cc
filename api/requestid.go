package api

import (
	"math/rand/v2"

	"github.com/pmapi/pmapi"
)

// newRequestID makes the id of a request that brought none: "req_" and 20
// base62 characters (docs/decisions/envelope-and-errors.md), about 119
// random bits. They come from the runtime's ChaCha8 generator (math/rand/v2's
// global source: seeded from the OS, per thread, no lock), not crypto/rand's
// getrandom: a request id is neither a secret nor a credential, only unique,
// and crypto/rand plus the string's two allocations were 0.7 µs of a list
// page in pmapi serve (docs/performance.md, "Where a list page's CPU goes"). Random, not a
// process prefix with a counter, so an id tells a client nothing about how
// many requests others made between two of its own.
func newRequestID() string {
	var b [24]byte
	copy(b[:], "req_")
	for i := 4; i < len(b); i++ {
		b[i] = pmapi.Base62[rand.Uint64N(62)]
	}
	return string(b[:])
}
