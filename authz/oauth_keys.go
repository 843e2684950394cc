package authz

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/seal"
)

// JWK is a public signing key as published in the JWKS document.
type JWK struct {
	Kty string `json:"kty" enum:"EC"`
	Crv string `json:"crv" enum:"P-256"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Alg string `json:"alg" enum:"ES256"`
	Use string `json:"use" enum:"sig"`
}

// KeyRing holds the ES256 keys access tokens are signed with. Private keys are
// stored sealed; the newest key signs, retired ones are published until every
// token they signed has expired.
type KeyRing struct {
	pool *pgxpool.Pool
	box  *seal.Box
	// RefreshEvery bounds how long an instance keeps signing with a key another
	// instance (or `pmapi admin oauth rotate-key`) has retired.
	RefreshEvery time.Duration

	mu       sync.RWMutex
	active   string
	private  map[string]*ecdsa.PrivateKey
	public   map[string]JWK
	keys     map[string]*ecdsa.PublicKey
	reloaded time.Time
}

// NewKeyRing reads and writes keys in the directory database.
func NewKeyRing(pool *pgxpool.Pool, box *seal.Box) *KeyRing {
	return &KeyRing{pool: pool, box: box, RefreshEvery: 30 * time.Second}
}

// jwkOf publishes a P-256 public key: the uncompressed point is 0x04 || X || Y,
// each coordinate 32 bytes, which is what a JWK's x and y carry.
func jwkOf(pub *ecdsa.PublicKey, kid string) (JWK, error) {
	point, err := pub.Bytes()
	if err != nil {
		return JWK{}, err
	}
	enc := base64.RawURLEncoding.EncodeToString
	return JWK{Kty: "EC", Crv: "P-256", X: enc(point[1:33]), Y: enc(point[33:]), Kid: kid, Alg: "ES256", Use: "sig"}, nil
}

// Load reads the keys, making a first one when there is none.
func (k *KeyRing) Load(ctx context.Context) error {
	if err := k.reload(ctx); err != nil {
		return err
	}
	k.mu.RLock()
	none := k.active == ""
	k.mu.RUnlock()
	if none {
		_, err := k.Rotate(ctx, 0)
		return err
	}
	return nil
}

func (k *KeyRing) reload(ctx context.Context) error {
	rows, err := k.pool.Query(ctx, `select kid, private_sealed, public_jwk, retired_at is null from oauth_signing_keys
		where retired_at is null or publish_until > now() order by created_at`)
	if err != nil {
		return err
	}
	defer rows.Close()
	private, public, keys, active := map[string]*ecdsa.PrivateKey{}, map[string]JWK{}, map[string]*ecdsa.PublicKey{}, ""
	for rows.Next() {
		var kid string
		var sealed, jwkRaw []byte
		var current bool
		if err := rows.Scan(&kid, &sealed, &jwkRaw, &current); err != nil {
			return err
		}
		var j JWK
		if err := json.Unmarshal(jwkRaw, &j); err != nil {
			return err
		}
		pub, err := j.publicKey()
		if err != nil {
			return err
		}
		keys[kid], public[kid] = pub, j
		if !current {
			continue
		}
		// Only the active key's private half is needed, to sign. One this
		// instance cannot open means its PMAPI_SECRET_KEY differs from the
		// others': refuse, rather than rotate the key away from under them.
		priv, err := k.openPrivate(kid, sealed)
		if err != nil {
			return fmt.Errorf(
				"the active OAuth signing key %s does not open with this PMAPI_SECRET_KEY "+
					"(or PMAPI_SECRET_KEY_PREVIOUS); every instance needs the same keys: %w",
				kid,
				err,
			)
		}
		private[kid], active = priv, kid
	}
	if err := rows.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	k.private, k.public, k.keys, k.active, k.reloaded = private, public, keys, active, time.Now()
	k.mu.Unlock()
	return nil
}

func (k *KeyRing) openPrivate(kid string, sealed []byte) (*ecdsa.PrivateKey, error) {
	der, err := k.box.Open(sealed, signingKeyAt(kid))
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKCS8PrivateKey([]byte(der))
	if err != nil {
		return nil, err
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("signing key is not ECDSA")
	}
	return priv, nil
}

// publicKey reads a published JWK back into a key.
func (j JWK) publicKey() (*ecdsa.PublicKey, error) {
	x, err := base64.RawURLEncoding.DecodeString(j.X)
	if err != nil {
		return nil, err
	}
	y, err := base64.RawURLEncoding.DecodeString(j.Y)
	if err != nil {
		return nil, err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("a P-256 coordinate is 32 bytes")
	}
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
}

// Rotate makes a new signing key; the previous ones stop signing and stay
// published for publishFor (the access-token lifetime) so their tokens verify.
func (k *KeyRing) Rotate(ctx context.Context, publishFor time.Duration) (string, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", err
	}
	kid := "k_" + pmapi.RandomBase62(16)
	jwk, err := jwkOf(&priv.PublicKey, kid)
	if err != nil {
		return "", err
	}
	raw, _ := json.Marshal(jwk)
	tx, err := k.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `update oauth_signing_keys
		set retired_at = now(), publish_until = now() + make_interval(secs => $1)
		where retired_at is null`, (publishFor + 5*time.Minute).Seconds()); err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, `insert into oauth_signing_keys (kid, alg, private_sealed, public_jwk)
		values ($1, 'ES256', $2, $3)`, kid, k.box.Seal(string(der), signingKeyAt(kid)), raw); err != nil {
		return "", err
	}
	if err := tx.Commit(ctx); err != nil {
		return "", err
	}
	return kid, k.reload(ctx)
}

// fresh reloads the keys when they are older than RefreshEvery, so a rotation
// made elsewhere reaches this instance's signing and JWKS. A failed reload keeps
// the keys it has: the database may be back by the next call.
func (k *KeyRing) fresh(ctx context.Context) {
	k.mu.RLock()
	stale := time.Since(k.reloaded) > k.RefreshEvery
	k.mu.RUnlock()
	if stale {
		_ = k.reload(ctx)
	}
}

// Sign signs claims with the active key as an RFC 9068 access token.
func (k *KeyRing) Sign(ctx context.Context, claims jwt.Claims) (string, error) {
	k.fresh(ctx)
	k.mu.RLock()
	kid, priv := k.active, k.private[k.active]
	k.mu.RUnlock()
	if priv == nil {
		return "", errors.New("no active signing key")
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["typ"] = "at+jwt"
	tok.Header["kid"] = kid
	return tok.SignedString(priv)
}

// publicKey returns the key of kid, reloading once a second at most when it is
// unknown (another instance may have rotated).
func (k *KeyRing) publicKey(ctx context.Context, kid string) (*ecdsa.PublicKey, error) {
	k.mu.RLock()
	pub, stale := k.keys[kid], time.Since(k.reloaded) > time.Second
	k.mu.RUnlock()
	if pub == nil && stale {
		if err := k.reload(ctx); err != nil {
			return nil, err
		}
		k.mu.RLock()
		pub = k.keys[kid]
		k.mu.RUnlock()
	}
	if pub == nil {
		return nil, fmt.Errorf("unknown kid %q", kid)
	}
	return pub, nil
}

// JWKS lists the published keys.
func (k *KeyRing) JWKS(ctx context.Context) []JWK {
	k.fresh(ctx)
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]JWK, 0, len(k.public))
	for _, j := range k.public {
		out = append(out, j)
	}
	return out
}
