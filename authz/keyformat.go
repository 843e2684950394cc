package authz

import (
	"hash/crc32"
	"strings"

	"github.com/pmapi/pmapi"
)

// API keys look like pmk_ + 32 base62 characters + a 6-character base62 CRC32 of
// everything before it. The checksum lets a secret scanner (or `pmapi key-check`)
// tell a real key from a look-alike offline, and lets the server reject mistyped
// keys without a database lookup.
const (
	KeyPrefix        = "pmk_"
	keyBodyLen       = 32
	keyChecksumLen   = 6
	KeyLength        = len(KeyPrefix) + keyBodyLen + keyChecksumLen
	KeyDisplayPrefix = 13 // characters of a key shown as `prefix`
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey returns a fresh key value.
func NewAPIKey() string {
	head := KeyPrefix + pmapi.RandomBase62(keyBodyLen)
	return head + checksum(head)
}

func checksum(head string) string {
	v := crc32.ChecksumIEEE([]byte(head))
	out := make([]byte, keyChecksumLen)
	for i := keyChecksumLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out)
}

// CheckAPIKey reports whether s has the shape and checksum of a pmapi key. It
// needs no database: a true answer means "this was minted by pmapi", not "valid".
func CheckAPIKey(s string) bool {
	if len(s) != KeyLength || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	head := s[:len(s)-keyChecksumLen]
	return checksum(head) == s[len(s)-keyChecksumLen:]
}

// App secrets: pm_sec_ + 40 base62; secretPrefix is the first 12 characters.
const (
	SecretPrefix        = "pm_sec_"
	secretDisplayPrefix = 12
)

// NewAppSecret returns a fresh app secret.
func NewAppSecret() string { return SecretPrefix + pmapi.RandomBase62(40) }
