package authz_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
)

const testIssuer = "https://pmapi.test"

// deploymentBox is the PMAPI_SECRET_KEY every test's instances share, as every
// instance of one deployment does: the signing keys table is server-wide.
var deploymentBox, _ = seal.New(seal.Random())

// oauthFixture is a workspace with an app, a live grant for it, and a verifier
// whose key ring lives in the test database.
type oauthFixture struct {
	fixture
	box   *seal.Box
	ring  *authz.KeyRing
	oauth *authz.OAuth
	grant uuid.UUID
	user  uuid.UUID
}

func setupOAuth(t *testing.T) oauthFixture {
	t.Helper()
	f := oauthFixture{fixture: setup(t), grant: pmapi.NewID(), user: pmapi.NewID(), box: deploymentBox}
	f.ring = authz.NewKeyRing(f.dir.Pool(), f.box)
	if err := f.ring.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.oauth = authz.NewOAuth(f.dir, f.ring, testIssuer)
	err := f.shard.Tx(context.Background(), f.ws.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(
			context.Background(),
			`insert into oauth_grants (workspace_id, id, client_id, user_id, scopes) values ($1, $2, $3, $4, $5)`,
			f.ws.ID,
			f.grant,
			f.clientID,
			f.user,
			[]string{"tasks:read"},
		)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// claims are what the server itself would sign for the fixture's grant.
func (f oauthFixture) claims() authz.AccessClaims {
	now := time.Now()
	return authz.AccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    testIssuer,
			Subject:   f.user.String(),
			Audience:  jwt.ClaimStrings{"pmapi"},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute)),
			ID:        pmapi.NewID().String(),
		},
		ClientID: f.clientID, Scope: "tasks:read", Workspace: f.ws.ID.String(), Grant: f.grant.String(),
	}
}

// signWith signs claims with any key and header, as a forger would.
func signWith(t *testing.T, method jwt.SigningMethod, key any, header map[string]any, claims jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyBearerRefusesEveryDefect(t *testing.T) {
	f := setupOAuth(t)
	ctx := context.Background()
	good := mustSign(t, f.ring, f.claims())
	p, err := f.oauth.VerifyBearer(ctx, f.clientID, good)
	if err != nil {
		t.Fatalf("a token the server signed is refused: %v", err)
	}
	if p.Workspace.ID != f.ws.ID || p.Subject != f.user || p.Credential != "oauth" {
		t.Fatalf("principal %+v", p)
	}
	kid := kidOf(t, good)
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	atJWT := map[string]any{"typ": "at+jwt", "kid": kid}
	pubDER := []byte(f.ring.JWKS(ctx)[0].X + f.ring.JWKS(ctx)[0].Y) // what an HS256 forger would key with

	with := func(change func(*authz.AccessClaims)) authz.AccessClaims {
		c := f.claims()
		change(&c)
		return c
	}
	sign := func(c authz.AccessClaims) string { return mustSign(t, f.ring, c) }
	for name, tc := range map[string]struct {
		token, clientID string
		code            pmapi.Code
	}{
		"wrong issuer": {
			sign(with(func(c *authz.AccessClaims) { c.Issuer = "https://evil.test" })),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"wrong audience": {
			sign(with(func(c *authz.AccessClaims) { c.Audience = jwt.ClaimStrings{"other-api"} })),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"no expiry": {
			sign(with(func(c *authz.AccessClaims) { c.ExpiresAt = nil })),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"expired": {
			sign(with(func(c *authz.AccessClaims) { c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Second)) })),
			f.clientID, pmapi.CodeTokenExpired,
		},
		"other client": {good, "pm_cli_00000000000000000000", pmapi.CodeInvalidToken},
		"other workspace": {
			sign(with(func(c *authz.AccessClaims) { c.Workspace = pmapi.NewID().String() })),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"unknown grant": {
			sign(with(func(c *authz.AccessClaims) { c.Grant = pmapi.NewID().String() })),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"typ JWT": {
			signWith(t, jwt.SigningMethodES256, f.privateForTest(t), map[string]any{"typ": "JWT", "kid": kid}, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"alg none": {
			signWith(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, atJWT, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"HS256 confusion": {
			signWith(t, jwt.SigningMethodHS256, pubDER, atJWT, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"stranger's key": {
			signWith(t, jwt.SigningMethodES256, stranger, atJWT, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"unknown kid": {
			signWith(t, jwt.SigningMethodES256, stranger, map[string]any{"typ": "at+jwt", "kid": "k_unknown"}, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"no kid": {
			signWith(t, jwt.SigningMethodES256, stranger, map[string]any{"typ": "at+jwt"}, f.claims()),
			f.clientID, pmapi.CodeInvalidToken,
		},
		"not a JWT at all": {"pmk_not_a_jwt", f.clientID, pmapi.CodeInvalidToken},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.oauth.VerifyBearer(ctx, tc.clientID, tc.token)
			if got := pmapi.ErrorCode(err); got != tc.code {
				t.Fatalf("got %q (%v), want %s", got, err, tc.code)
			}
		})
	}
}

// privateForTest signs with the ring's own key but lets the test choose the
// header, which Sign does not: it proves "typ" is checked, not merely set.
func (f oauthFixture) privateForTest(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	return authz.ActiveKeyForTest(f.ring)
}

func TestKeyRotationKeepsOldTokensValid(t *testing.T) {
	f := setupOAuth(t)
	ctx := context.Background()
	before := mustSign(t, f.ring, f.claims())
	oldKid := kidOf(t, before)
	// Another instance loads its ring now, before this one rotates.
	other := authz.NewKeyRing(f.dir.Pool(), f.box)
	if err := other.Load(ctx); err != nil {
		t.Fatal(err)
	}
	newKid, err := f.ring.Rotate(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]bool{}
	for _, k := range f.ring.JWKS(ctx) {
		published[k.Kid] = true
	}
	if newKid == oldKid || !published[oldKid] || !published[newKid] {
		t.Fatalf("after rotation the JWKS holds %v; want %s and %s", f.ring.JWKS(ctx), oldKid, newKid)
	}
	after := mustSign(t, f.ring, f.claims())
	if kid := kidOf(t, after); kid != newKid {
		t.Fatalf("new tokens are signed with %s, not the new key %s", kid, newKid)
	}
	for name, tok := range map[string]string{"old": before, "new": after} {
		if _, err := f.oauth.VerifyBearer(ctx, f.clientID, tok); err != nil {
			t.Errorf("%s token after rotation: %v", name, err)
		}
	}
	// The other instance, once its keys are RefreshEvery old, signs with the
	// new key too: a rotation reaches every instance.
	other.RefreshEvery = 0
	if kid := kidOf(t, mustSign(t, other, f.claims())); kid != newKid {
		t.Errorf("another instance still signs with %s after the rotation to %s", kid, newKid)
	}
	other.RefreshEvery = time.Hour
	// Its verifier learns a new key from the database the first time it meets
	// its kid, once its one-reload-a-second throttle allows (unknown
	// kids must not turn into a query each).
	time.Sleep(1100 * time.Millisecond)
	if _, err := authz.NewOAuth(f.dir, other, testIssuer).VerifyBearer(ctx, f.clientID, after); err != nil {
		t.Errorf("another instance refuses the rotated key's token: %v", err)
	}
	// Once the old key's publication ends it leaves the JWKS and its tokens fail.
	if _, err := f.dir.Pool().Exec(ctx, `update oauth_signing_keys set publish_until = now() - interval '1 second'
		where kid = $1`, oldKid); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ring.Rotate(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, k := range f.ring.JWKS(ctx) {
		if k.Kid == oldKid {
			t.Fatal("an expired key is still published")
		}
	}
	if _, err := f.oauth.VerifyBearer(ctx, f.clientID, before); pmapi.ErrorCode(err) != pmapi.CodeInvalidToken {
		t.Errorf("a token of an unpublished key: %v", err)
	}
}

func mustSign(t *testing.T, ring *authz.KeyRing, c authz.AccessClaims) string {
	t.Helper()
	s, err := ring.Sign(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An instance with another PMAPI_SECRET_KEY refuses to start instead of
// replacing the signing key every other instance uses.
func TestKeyRingRefusesAnotherSecretKey(t *testing.T) {
	f := setupOAuth(t)
	ctx := context.Background()
	before := kidOf(t, mustSign(t, f.ring, f.claims()))
	wrong, _ := seal.New(seal.Random())
	err := authz.NewKeyRing(f.dir.Pool(), wrong).Load(ctx)
	if err == nil || !strings.Contains(err.Error(), "PMAPI_SECRET_KEY") {
		t.Fatalf("a ring with another secret key loaded: %v", err)
	}
	f.ring.RefreshEvery = 0
	if after := kidOf(t, mustSign(t, f.ring, f.claims())); after != before {
		t.Errorf("the signing key changed from %s to %s", before, after)
	}
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(token, &authz.AccessClaims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := parsed.Header["kid"].(string)
	return kid
}
