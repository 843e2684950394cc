package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

var here = Bind(
	"webhook_subscriptions",
	"secret_sealed",
	"01a2067a-08b3-7dd9-85e5-1da4831daa78",
	"0190d1c4-0000-7000-8000-000000000001",
)

func mustNew(t *testing.T, current string, previous ...string) *Box {
	t.Helper()
	b, err := New(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealRoundTripAndTamper(t *testing.T) {
	b := mustNew(t, Random())
	s := b.Seal("whsec_secret", here)
	if bytes.Contains(s, []byte("whsec_secret")) {
		t.Fatal("sealed value holds the clear text")
	}
	if got, err := b.Open(s, here); err != nil || got != "whsec_secret" {
		t.Fatalf("%q %v", got, err)
	}
	if !b.Current(s) || s[0] != version1 {
		t.Errorf("a fresh value is not in the current form: % x", s[:headerLen])
	}
	for i := range s {
		c := bytes.Clone(s)
		c[i] ^= 1
		if _, err := b.Open(c, here); err == nil {
			t.Errorf("a value with byte %d flipped opened", i)
		}
	}
	other := mustNew(t, Random())
	if _, err := other.Open(b.Seal("x", here), here); !errors.Is(err, ErrNoKey) ||
		!strings.Contains(err.Error(), b.KeyID()) {
		t.Errorf("another key: %v", err)
	}
	if bytes.Equal(b.Seal("x", here), b.Seal("x", here)) {
		t.Error("two seals of one value are equal (no fresh nonce)")
	}
}

// TestSealedValuesAreBoundToTheirRow: a value copied to another row, column or
// table does not open there, nor does one whose binding parts were shifted
// between fields.
func TestSealedValuesAreBoundToTheirRow(t *testing.T) {
	b := mustNew(t, Random())
	s := b.Seal("whsec_secret", Bind("webhook_subscriptions", "secret_sealed", "ws1", "sub1"))
	for name, elsewhere := range map[string]Binding{
		"another row":       Bind("webhook_subscriptions", "secret_sealed", "ws1", "sub2"),
		"another workspace": Bind("webhook_subscriptions", "secret_sealed", "ws2", "sub1"),
		"another column":    Bind("webhook_subscriptions", "previous_secret_sealed", "ws1", "sub1"),
		"another table":     Bind("oauth_signing_keys", "secret_sealed", "ws1", "sub1"),
		"shifted parts":     Bind("webhook_subscriptions", "secret_sealed", "ws1sub1"),
		"shifted parts 2":   Bind("webhook_subscriptions", "secret_sealedws1", "sub1"),
	} {
		if _, err := b.Open(s, elsewhere); !errors.Is(err, ErrNoKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := b.Open(s, Binding{}); err == nil {
		t.Error("an unbound open succeeded")
	}
}

// legacySeal is how values were sealed before key ids: a nonce and the
// ciphertext under the key bytes (or SHA-256 of a passphrase), no AAD.
func legacySeal(t *testing.T, keyText, plain string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(keyText)
	if err != nil || len(raw) != 32 {
		sum := sha256.Sum256([]byte(keyText))
		raw = sum[:]
	}
	block, _ := aes.NewCipher(raw)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, []byte(plain), nil)
}

// TestRotation: a new key with the old one as previous opens values sealed
// under either, in the current form or the legacy one, and seals under the
// new key; without the previous key only the new key's values open.
func TestRotation(t *testing.T) {
	k1, k2 := Random(), Random()
	const passphrase = "an old passphrase that is at least thirty-two characters long"
	old := mustNew(t, k1)
	underK1, legacyK1, legacyPass := old.Seal(
		"v1",
		here,
	), legacySeal(
		t,
		k1,
		"legacy",
	), legacySeal(
		t,
		passphrase,
		"from a passphrase",
	)
	if got, err := old.Open(legacyK1, here); err != nil || got != "legacy" || old.Current(legacyK1) {
		t.Errorf("legacy value under the current key: %q %v", got, err)
	}
	rotated := mustNew(t, k2, k1, passphrase, k2, " "+k1+"\n")
	if rotated.Keys() != 3 || rotated.KeyID() == old.KeyID() {
		t.Errorf("%d keys, id %s (old %s)", rotated.Keys(), rotated.KeyID(), old.KeyID())
	}
	for want, s := range map[string][]byte{"v1": underK1, "legacy": legacyK1, "from a passphrase": legacyPass} {
		if got, err := rotated.Open(s, here); err != nil || got != want {
			t.Errorf("%s under the previous keys: %q %v", want, got, err)
		}
		if rotated.Current(s) {
			t.Errorf("%s counts as current under the new key", want)
		}
	}
	under2 := rotated.Seal("new", here)
	if !rotated.Current(under2) || old.Current(under2) {
		t.Error("a value sealed after the rotation is not under the new key")
	}
	if got, err := old.Open(under2, here); err == nil {
		t.Errorf("the old key opened a value sealed under the new one: %q", got)
	}
	dropped := mustNew(t, k2)
	if got, err := dropped.Open(under2, here); err != nil || got != "new" {
		t.Errorf("without the previous key: %q %v", got, err)
	}
	if _, err := dropped.Open(underK1, here); !errors.Is(err, ErrNoKey) {
		t.Errorf("a value under a dropped key: %v", err)
	}
	if mustNew(t, k2).KeyID() != rotated.KeyID() {
		t.Error("a key's id is not stable")
	}
}

func TestKeyTexts(t *testing.T) {
	if _, err := New("short"); err == nil {
		t.Error("a short key was accepted")
	}
	if _, err := New("a passphrase that is at least thirty-two characters long"); err == nil ||
		!strings.Contains(err.Error(), "PMAPI_SECRET_KEY_PREVIOUS") {
		t.Errorf("a passphrase as the current key: %v", err)
	}
	if _, err := New(base64.StdEncoding.EncodeToString(make([]byte, 16))); err == nil {
		t.Error("16 bytes were accepted")
	}
	if _, err := New(Random()+"\n", ""); err == nil {
		t.Error("an empty previous key was accepted")
	}
	if _, err := New(" " + Random() + "\n"); err != nil {
		t.Errorf("a key with surrounding white space (a Secret's file): %v", err)
	}
}
