// Package seal encrypts secrets pmapi must be able to read back (webhook
// signing secrets, which sign every delivery) so the database never holds them
// in clear: AES-256-GCM under a key the operator provides (PMAPI_SECRET_KEY).
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// Box seals and opens values with one key.
type Box struct{ aead cipher.AEAD }

// New derives a box from a key text: 32 bytes in base64 (what `openssl rand
// -base64 32` prints), or any passphrase of 32 characters or more, hashed.
func New(key string) (*Box, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		if len(key) < 32 {
			return nil, errors.New("PMAPI_SECRET_KEY must be 32 bytes in base64 or a passphrase of at least 32 characters")
		}
		sum := sha256.Sum256([]byte(key))
		raw = sum[:]
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Random returns a fresh key text for New.
func Random() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Seal encrypts plain; the nonce travels in front of the ciphertext.
func (b *Box) Seal(plain string) []byte {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return b.aead.Seal(nonce, nonce, []byte(plain), nil)
}

// Open decrypts what Seal made.
func (b *Box) Open(sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed value too short")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", fmt.Errorf("open sealed value (wrong PMAPI_SECRET_KEY?): %w", err)
	}
	return string(plain), nil
}
