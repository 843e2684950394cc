package seal

import (
	"bytes"
	"testing"
)

func TestSealRoundTripAndTamper(t *testing.T) {
	b, err := New(Random())
	if err != nil {
		t.Fatal(err)
	}
	s := b.Seal("whsec_secret")
	if bytes.Contains(s, []byte("whsec_secret")) {
		t.Fatal("sealed value holds the clear text")
	}
	if got, err := b.Open(s); err != nil || got != "whsec_secret" {
		t.Fatalf("%q %v", got, err)
	}
	s[len(s)-1] ^= 1
	if _, err := b.Open(s); err == nil {
		t.Error("a tampered value opened")
	}
	other, _ := New(Random())
	if _, err := other.Open(b.Seal("x")); err == nil {
		t.Error("another key opened the value")
	}
	if _, err := New("short"); err == nil {
		t.Error("a short key was accepted")
	}
	if _, err := New("a passphrase that is at least thirty-two characters long"); err != nil {
		t.Error(err)
	}
}
