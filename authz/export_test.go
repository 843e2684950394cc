package authz

import "crypto/ecdsa"

// ActiveKeyForTest exposes the signing key so a test can sign with a header
// of its own choosing and prove the verifier checks it.
func ActiveKeyForTest(k *KeyRing) *ecdsa.PrivateKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.private[k.active]
}
