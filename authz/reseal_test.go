package authz_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestResealSigningKeys: keys sealed under the old key (one retired key in
// the legacy form, from before key ids) are resealed under the new one, a
// private half copied onto another key's row is named and left alone, a
// second run does nothing, and the ring then loads and signs with the new key
// alone. Its own database: the signing keys are server-wide.
func TestResealSigningKeys(t *testing.T) {
	ctx := context.Background()
	pool := testdb.Pool(t, testdb.ExtraDatabase(t).AppURL)
	dir, _ := testdb.DirectoryOver(t, pool)
	k1, k2 := seal.Random(), seal.Random()
	old, _ := seal.New(k1)
	ring := authz.NewKeyRing(pool, old)
	if err := ring.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Rotate(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	raw, _ := base64.StdEncoding.DecodeString(k1)
	block, _ := aes.NewCipher(raw)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	point, _ := priv.PublicKey.Bytes()
	jwk, _ := json.Marshal(authz.JWK{Kty: "EC", Crv: "P-256", X: base64.RawURLEncoding.EncodeToString(point[1:33]),
		Y: base64.RawURLEncoding.EncodeToString(point[33:]), Kid: "k_legacy", Alg: "ES256", Use: "sig"})
	if _, err := pool.Exec(ctx, `insert into oauth_signing_keys
		(kid, alg, private_sealed, public_jwk, retired_at, publish_until)
		values ('k_legacy', 'ES256', $1, $2, now(), now() + interval '1 hour')`,
		aead.Seal(nonce, nonce, der, nil), jwk); err != nil {
		t.Fatal(err)
	}
	var other []byte
	if err := pool.QueryRow(ctx, "select private_sealed from oauth_signing_keys where kid <> 'k_legacy' limit 1").
		Scan(&other); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into oauth_signing_keys
		(kid, alg, private_sealed, public_jwk, retired_at, publish_until)
		values ('k_copied', 'ES256', $1, $2, now(), now())`, other, jwk); err != nil {
		t.Fatal(err)
	}

	rotated, _ := seal.New(k2, k1)
	reports, err := authz.Reseal(ctx, dir, rotated)
	if err != nil || len(reports) != 1 {
		t.Fatalf("%+v %v", reports, err)
	}
	if r := reports[0]; r.Resealed != 3 || r.Current != 0 || !slices.Equal(r.Failed, []string{"k_copied"}) {
		t.Errorf("first run: %+v", r)
	}
	again, err := authz.Reseal(ctx, dir, rotated)
	if r := again[0]; err != nil || r.Resealed != 0 || r.Current != 3 || !slices.Equal(r.Failed, []string{"k_copied"}) {
		t.Errorf("second run: %+v %v", r, err)
	}

	onlyNew, _ := seal.New(k2)
	fresh := authz.NewKeyRing(pool, onlyNew)
	if err := fresh.Load(ctx); err != nil {
		t.Fatalf("the ring under the new key alone: %v", err)
	}
	if _, err := fresh.Sign(ctx, jwt.RegisteredClaims{Subject: "s"}); err != nil {
		t.Errorf("sign: %v", err)
	}
}
