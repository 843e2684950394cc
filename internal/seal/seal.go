// Package seal encrypts secrets pmapi must be able to read back (webhook
// signing secrets, which sign every delivery, and OAuth signing keys) so the
// database never holds them in clear: AES-256-GCM under a key the operator
// provides (PMAPI_SECRET_KEY).
//
// A sealed value is a version byte, the id of the key that sealed it, a nonce
// and the ciphertext. Its additional authenticated data names the table, the
// column and the primary key of the row it lives in (Bind), so a value copied
// to another row or column does not open. Older keys (PMAPI_SECRET_KEY_PREVIOUS)
// keep values sealed under them readable until `pmapi admin reseal` has
// rewritten them under the current key.
//
// Values sealed before versions existed (a nonce, then the ciphertext, no key
// id, bound to nothing) still open under any configured key; resealing turns
// them into the current form.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	version1 = 0x01
	idLen    = 4
	// headerLen is the version byte and the key id, which every value sealed
	// under a key starts with (see CurrentPrefix).
	headerLen = 1 + idLen
)

// key is one PMAPI_SECRET_KEY. The bound form seals under a key derived with
// HKDF, not the configured bytes themselves, which the legacy form used: the
// two forms never share an AES key.
type key struct {
	id     [idLen]byte
	bound  cipher.AEAD
	legacy cipher.AEAD
}

// Box seals under the current key and opens under the current or a previous
// one.
type Box struct {
	keys []*key // the current key first
}

// New builds a box from PMAPI_SECRET_KEY and PMAPI_SECRET_KEY_PREVIOUS. The
// current key must be 32 random bytes in base64, what `openssl rand -base64
// 32` prints: a passphrase would need a key derivation function, and one that
// gives every instance the same key needs a fixed salt, which lets an attacker
// precompute guesses for every deployment at once. Previous keys may also be
// a passphrase of 32 characters or more, which earlier versions accepted (and
// hashed with SHA-256), so values sealed under one can be resealed.
func New(current string, previous ...string) (*Box, error) {
	raw, ok := randomKey(current)
	if !ok {
		if len(strings.TrimSpace(current)) >= 32 {
			return nil, errors.New(
				"PMAPI_SECRET_KEY must be 32 random bytes in base64 (openssl rand -base64 32); " +
					"passphrases are no longer accepted: put the passphrase in PMAPI_SECRET_KEY_PREVIOUS, " +
					"a new key in PMAPI_SECRET_KEY, and run pmapi admin reseal " +
					`(docs/operations.md, "Rotating PMAPI_SECRET_KEY")`,
			)
		}
		return nil, errors.New("PMAPI_SECRET_KEY must be 32 random bytes in base64 (openssl rand -base64 32)")
	}
	cur, err := newKey(raw)
	if err != nil {
		return nil, err
	}
	b := &Box{keys: []*key{cur}}
	for i, p := range previous {
		raw, ok := randomKey(p)
		if !ok {
			if p = strings.TrimSpace(p); len(p) < 32 {
				return nil, fmt.Errorf(
					"PMAPI_SECRET_KEY_PREVIOUS: entry %d is neither 32 bytes in base64 nor a passphrase of at least 32 characters",
					i+1,
				)
			}
			sum := sha256.Sum256([]byte(p))
			raw = sum[:]
		}
		k, err := newKey(raw)
		if err != nil {
			return nil, err
		}
		if !b.has(k.id) {
			b.keys = append(b.keys, k)
		}
	}
	return b, nil
}

func randomKey(text string) ([]byte, bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	return raw, err == nil && len(raw) == 32
}

func newKey(raw []byte) (*key, error) {
	k := &key{}
	id, err := hkdf.Key(sha256.New, raw, nil, "pmapi seal key id", idLen)
	if err != nil {
		return nil, err
	}
	copy(k.id[:], id)
	derived, err := hkdf.Key(sha256.New, raw, nil, "pmapi seal v1 aes-256-gcm", 32)
	if err != nil {
		return nil, err
	}
	if k.bound, err = gcm(derived); err != nil {
		return nil, err
	}
	if k.legacy, err = gcm(raw); err != nil {
		return nil, err
	}
	return k, nil
}

func gcm(raw []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (b *Box) has(id [idLen]byte) bool {
	for _, k := range b.keys {
		if k.id == id {
			return true
		}
	}
	return false
}

// Random returns a fresh key text for New.
func Random() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// KeyID names the current key (hex of its id) so operators can tell which
// key values are sealed under; it reveals nothing of the key.
func (b *Box) KeyID() string { return hex.EncodeToString(b.keys[0].id[:]) }

// Keys is how many keys the box opens with, the current one included.
func (b *Box) Keys() int { return len(b.keys) }

// Binding is where a sealed value lives; see Bind.
type Binding struct{ aad []byte }

// Bind names a sealed value's table, column and row (the primary key's
// columns, workspace_id first where there is one). Each part is
// length-prefixed, so no two different bindings read the same.
func Bind(table, column string, primaryKey ...string) Binding {
	aad := []byte("pmapi seal binding")
	for _, part := range append([]string{table, column}, primaryKey...) {
		aad = binary.AppendUvarint(aad, uint64(len(part)))
		aad = append(aad, part...)
	}
	return Binding{aad: aad}
}

func (b *Box) header(k *key) []byte {
	return append([]byte{version1}, k.id[:]...)
}

// Seal encrypts plain for the place where names, under the current key.
func (b *Box) Seal(plain string, where Binding) []byte {
	if where.aad == nil {
		panic("seal: a value must be bound to its row (seal.Bind)")
	}
	k := b.keys[0]
	nonce := make([]byte, k.bound.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	head := b.header(k)
	aad := append(append([]byte{}, head...), where.aad...)
	return k.bound.Seal(append(head, nonce...), nonce, []byte(plain), aad)
}

// ErrNoKey is what Open answers for a value no configured key opens where it
// is bound: sealed under a key that is no longer configured, tampered with,
// or copied from another row.
var ErrNoKey = errors.New(
	"the sealed value opens under none of the configured keys (PMAPI_SECRET_KEY, PMAPI_SECRET_KEY_PREVIOUS) for this row",
)

// Open decrypts what Seal made for the same place, under whichever
// configured key sealed it, and values of the legacy form.
func (b *Box) Open(sealed []byte, where Binding) (string, error) {
	if where.aad == nil {
		return "", errors.New("seal: open needs the value's binding (seal.Bind)")
	}
	if len(sealed) > headerLen && sealed[0] == version1 {
		for _, k := range b.keys {
			n := k.bound.NonceSize()
			if !bytes.Equal(sealed[1:headerLen], k.id[:]) || len(sealed) < headerLen+n {
				continue
			}
			aad := append(append([]byte{}, sealed[:headerLen]...), where.aad...)
			if plain, err := k.bound.Open(nil, sealed[headerLen:headerLen+n], sealed[headerLen+n:], aad); err == nil {
				return string(plain), nil
			}
		}
	}
	// The legacy form starts with its random nonce, which may begin like a
	// header: try it whatever the first byte is.
	for _, k := range b.keys {
		n := k.legacy.NonceSize()
		if len(sealed) < n {
			continue
		}
		if plain, err := k.legacy.Open(nil, sealed[:n], sealed[n:], nil); err == nil {
			return string(plain), nil
		}
	}
	if len(sealed) > headerLen && sealed[0] == version1 {
		return "", fmt.Errorf("%w (its header names key %x)", ErrNoKey, sealed[1:headerLen])
	}
	return "", ErrNoKey
}

// Current reports whether sealed is in the current form under the current
// key: `pmapi admin reseal` leaves such values alone.
func (b *Box) Current(sealed []byte) bool {
	return bytes.HasPrefix(sealed, b.CurrentPrefix())
}

// CurrentPrefix is what every value sealed under the current key starts with,
// for SQL that skips those (substring(col from 1 for 5) <> $prefix).
func (b *Box) CurrentPrefix() []byte { return b.header(b.keys[0]) }
