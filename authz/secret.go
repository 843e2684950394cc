package authz

import (
	"crypto/sha256"
	"crypto/subtle"
)

// hashSecret is how every bearer secret (session ids, API keys, refresh tokens)
// is stored: the secrets are 160+ bits of randomness, so an unsalted SHA-256 is
// enough and lets the hash itself be the lookup key.
func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// sameHash compares hashes without leaking timing.
func sameHash(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
