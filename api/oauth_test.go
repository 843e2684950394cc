package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"golang.org/x/oauth2"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// oauthEnv serves the app on loopback with a 1-second polling interval.
func oauthEnv(t *testing.T, grace time.Duration) (*apitest.Env, string, *apitest.Tenant) {
	t.Helper()
	env := apitest.New(t, func(d *apitest.Config) {
		d.OAuth.Interval = time.Second
		d.OAuth.ReuseGrace = grace
	})
	base := env.Listen(t)
	return env, base, env.NewTenant(t)
}

func oauthConfig(base, clientID string, style oauth2.AuthStyle, scopes ...string) *oauth2.Config {
	return &oauth2.Config{ClientID: clientID, Scopes: scopes, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: base + "/openapi/v1/oauth/device/code", TokenURL: base + "/openapi/v1/oauth/token", AuthStyle: style}}
}

func approve(t *testing.T, tn *apitest.Tenant, code, action string) *apitest.Response {
	t.Helper()
	return tn.Console(t, "POST", "/openapi/v1/oauth/device/approve", map[string]any{"user_code": code, "action": action})
}

// bearerGet calls a resource route with an access token, through the app and
// the document's validation.
func bearerGet(t *testing.T, env *apitest.Env, clientID, token, path string) (int, map[string]any) {
	t.Helper()
	r := env.Do(
		t,
		apitest.Request{
			Method: "GET",
			Path:   path,
			Header: map[string]string{"X-Client-ID": clientID, "Authorization": "Bearer " + token},
		},
	)
	return r.Status, r.Body
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestOAuthDeviceFlowWithGolangOAuth2(t *testing.T) {
	t.Parallel()
	for _, style := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"in params", oauth2.AuthStyleInParams}, {"auto-detect", oauth2.AuthStyleAutoDetect}} {
		t.Run(style.name, func(t *testing.T) {
			t.Parallel()
			env, base, tn := oauthEnv(t, 30*time.Second)
			prj := tn.CreateProject(t, map[string]any{"name": "P"})["id"].(string)
			tn.CreateTask(t, map[string]any{"projectId": prj, "title": "visible through OAuth"})
			conf := oauthConfig(base, tn.ClientID, style.style, "tasks:read")
			ctx := context.Background()
			da, err := conf.DeviceAuth(ctx)
			if err != nil {
				t.Fatalf("DeviceAuth: %v", err)
			}
			if len(da.UserCode) != 9 || da.UserCode[4] != '-' ||
				!strings.HasPrefix(da.VerificationURIComplete, da.VerificationURI) ||
				da.Interval != 1 {
				t.Fatalf("device auth response %+v", da)
			}
			go func() {
				time.Sleep(1500 * time.Millisecond)
				// Lower case without the dash: codes are matched loosely.
				approve(t, tn, strings.ToLower(strings.ReplaceAll(da.UserCode, "-", "")), "approve")
			}()
			tok, err := conf.DeviceAccessToken(ctx, da)
			if err != nil {
				t.Fatalf("DeviceAccessToken: %v", err)
			}
			if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("scope") != "tasks:read" {
				t.Fatalf("token %+v", tok)
			}
			status, body := bearerGet(t, env, tn.ClientID, tok.AccessToken, "/openapi/v1/resource/task/list")
			if status != 200 || !strings.Contains(toJSON(body), "visible through OAuth") {
				t.Fatalf("reading tasks with the token: %d %v", status, body)
			}
			status, body = bearerGet(t, env, tn.ClientID, tok.AccessToken, "/openapi/v1/resource/project/list")
			if status != 403 || errCode(body) != "INSUFFICIENT_SCOPE" {
				t.Errorf("a tasks:read token reads projects: %d %v", status, body)
			}
			// The library refreshes through /oauth/token once the token is stale.
			tok.Expiry = time.Now().Add(-time.Minute)
			fresh, err := conf.TokenSource(ctx, tok).Token()
			if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
				t.Fatalf("refresh: %v", err)
			}
			if status, _ := bearerGet(t, env, tn.ClientID, fresh.AccessToken, "/openapi/v1/resource/task/list"); status != 200 {
				t.Errorf("refreshed token: %d", status)
			}
		})
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// post sends a form to an OAuth endpoint through the app; the answer is
// validated against the document like every other.
func post(
	t *testing.T,
	env *apitest.Env,
	path string,
	form url.Values,
	basic ...string,
) (int, http.Header, map[string]any) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if len(basic) == 2 {
		h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(basic[0])+":"+url.QueryEscape(basic[1])),
		)
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: path, Body: form.Encode(), Header: h})
	return r.Status, r.Header, r.Body
}

func deviceCode(t *testing.T, env *apitest.Env, clientID string) map[string]any {
	t.Helper()
	status, _, body := post(t, env, "/openapi/v1/oauth/device/code", url.Values{"client_id": {clientID}})
	if status != 200 {
		t.Fatalf("device code: %d %v", status, body)
	}
	return body
}

func poll(t *testing.T, env *apitest.Env, clientID, code string) (int, map[string]any) {
	t.Helper()
	status, _, body := post(
		t,
		env,
		"/openapi/v1/oauth/token",
		url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
			"device_code": {code}, "client_id": {clientID}},
	)
	return status, body
}

func TestOAuthTokenErrors(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 30*time.Second)
	dc := deviceCode(t, env, tn.ClientID)
	code := dc["device_code"].(string)

	if s, b := poll(t, env, tn.ClientID, code); s != 400 || b["error"] != "authorization_pending" {
		t.Fatalf("pending: %d %v", s, b)
	}
	if s, b := poll(t, env, tn.ClientID, code); s != 400 || b["error"] != "slow_down" {
		t.Fatalf("slow_down: %d %v", s, b)
	}
	// The interval grew by 5 s: polling 1.5 s later is still too fast.
	time.Sleep(1500 * time.Millisecond)
	if s, b := poll(t, env, tn.ClientID, code); b["error"] != "slow_down" {
		t.Fatalf("after slow_down the interval must have grown: %d %v", s, b)
	}
	if r := approve(t, tn, dc["user_code"].(string), "deny"); r.Status != 200 || r.Str("status") != "DENIED" {
		t.Fatalf("deny: %s", r.Raw)
	}
	if _, b := poll(t, env, tn.ClientID, code); b["error"] != "access_denied" {
		t.Fatalf("after deny: %v", b)
	}
	if _, b := poll(t, env, tn.ClientID, "pmd_unknown"); b["error"] != "invalid_grant" {
		t.Errorf("unknown device code: %v", b)
	}
	if s, _, b := post(t, env, "/openapi/v1/oauth/token",
		url.Values{"grant_type": {"password"}, "client_id": {tn.ClientID}}); s != 400 ||
		b["error"] != "unsupported_grant_type" {
		t.Errorf("unsupported grant: %d %v", s, b)
	}
	if s, _, b := post(t, env, "/openapi/v1/oauth/device/code",
		url.Values{"client_id": {"pm_cli_00000000000000000000"}}); s != 400 ||
		b["error"] != "invalid_client" {
		t.Errorf("unknown client: %d %v", s, b)
	}
	s, h, b := post(t, env, "/openapi/v1/oauth/device/code", url.Values{}, tn.ClientID, "pm_sec_wrong")
	if s != 401 || b["error"] != "invalid_client" || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("wrong secret by header: %d %v %v", s, b, h)
	}
	if s, _, b := post(t, env, "/openapi/v1/oauth/device/code",
		url.Values{"client_id": {tn.ClientID}, "scope": {"tasks:delete"}}); s != 400 ||
		b["error"] != "invalid_scope" {
		t.Errorf("invalid scope: %d %v", s, b)
	}
	// A DISABLED app is invalid_client.
	tn.Console(t, "PATCH", "/openapi/v1/apps/"+tn.ClientID, map[string]any{"status": "DISABLED"})
	if _, _, b := post(t, env, "/openapi/v1/oauth/device/code",
		url.Values{"client_id": {tn.ClientID}}); b["error"] != "invalid_client" {
		t.Errorf("disabled app: %v", b)
	}
	tn.Console(t, "PATCH", "/openapi/v1/apps/"+tn.ClientID, map[string]any{"status": "ACTIVE"})

	// Expired codes.
	short := apitest.New(t, func(d *apitest.Config) { d.OAuth.DeviceTTL = time.Second })
	stn := short.NewTenant(t)
	sdc := deviceCode(t, short, stn.ClientID)
	time.Sleep(1100 * time.Millisecond)
	if _, b := poll(t, short, stn.ClientID, sdc["device_code"].(string)); b["error"] != "expired_token" {
		t.Errorf("expired: %v", b)
	}

	// Redeeming twice revokes what the first redemption issued.
	dc2 := deviceCode(t, env, tn.ClientID)
	approve(t, tn, dc2["user_code"].(string), "approve")
	s, first := poll(t, env, tn.ClientID, dc2["device_code"].(string))
	if s != 200 {
		t.Fatalf("redeem: %d %v", s, first)
	}
	if _, b := poll(t, env, tn.ClientID, dc2["device_code"].(string)); b["error"] != "invalid_grant" {
		t.Errorf("second redemption: %v", b)
	}
	if s, b := bearerGet(t, env, tn.ClientID, first["access_token"].(string), "/openapi/v1/me"); s != 401 ||
		errCode(b) != "INVALID_TOKEN" {
		t.Errorf("the first redemption's token after a second redemption: %d %v", s, b)
	}
}

// obtain runs a device flow to the end for the tenant's app.
func obtain(t *testing.T, env *apitest.Env, tn *apitest.Tenant) map[string]any {
	t.Helper()
	dc := deviceCode(t, env, tn.ClientID)
	if r := approve(t, tn, dc["user_code"].(string), "approve"); r.Status != 200 {
		t.Fatalf("approve: %s", r.Raw)
	}
	s, b := poll(t, env, tn.ClientID, dc["device_code"].(string))
	if s != 200 {
		t.Fatalf("token: %d %v", s, b)
	}
	return b
}

func refresh(t *testing.T, env *apitest.Env, clientID, token string) (int, map[string]any) {
	t.Helper()
	s, _, b := post(
		t,
		env,
		"/openapi/v1/oauth/refresh",
		url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {clientID}},
	)
	return s, b
}

func TestOAuthRefreshRotationAndFamilyRevocation(t *testing.T) {
	t.Parallel()
	env, _, tn := oauthEnv(t, 0)
	tok := obtain(t, env, tn)
	s, next := refresh(t, env, tn.ClientID, tok["refresh_token"].(string))
	if s != 200 || next["refresh_token"] == tok["refresh_token"] {
		t.Fatalf("rotation: %d %v", s, next)
	}
	// Reusing the spent token (no grace here) revokes the whole family.
	if s, b := refresh(t, env, tn.ClientID, tok["refresh_token"].(string)); s != 400 || b["error"] != "invalid_grant" {
		t.Fatalf("reuse: %d %v", s, b)
	}
	if s, b := refresh(t, env, tn.ClientID, next["refresh_token"].(string)); b["error"] != "invalid_grant" {
		t.Errorf("the newest refresh token after reuse: %d %v", s, b)
	}
	if s, b := bearerGet(t, env, tn.ClientID, next["access_token"].(string), "/openapi/v1/me"); s != 401 ||
		errCode(b) != "INVALID_TOKEN" {
		t.Errorf("the newest access token after reuse: %d %v", s, b)
	}

	// Within the grace a client that lost the answer may retry.
	genv, _, gtn := oauthEnv(t, time.Minute)
	g := obtain(t, genv, gtn)
	refresh(t, genv, gtn.ClientID, g["refresh_token"].(string))
	if s, b := refresh(t, genv, gtn.ClientID, g["refresh_token"].(string)); s != 200 {
		t.Errorf("retry within the grace: %d %v", s, b)
	}

	// RFC 7009: revoking the refresh token revokes its access tokens; unknown
	// tokens are fine.
	r := obtain(t, genv, gtn)
	if s, _, b := post(t, genv, "/openapi/v1/oauth/revoke",
		url.Values{"token": {r["refresh_token"].(string)}, "client_id": {gtn.ClientID}}); s != 200 {
		t.Fatalf("revoke: %d %v", s, b)
	}
	if s, _ := bearerGet(t, genv, gtn.ClientID, r["access_token"].(string), "/openapi/v1/me"); s != 401 {
		t.Errorf("access token after its refresh token was revoked: %d", s)
	}
	if s, _, _ := post(t, genv, "/openapi/v1/oauth/revoke",
		url.Values{"token": {"nonsense"}, "client_id": {gtn.ClientID}}); s != 200 {
		t.Errorf("revoking an unknown token: %d", s)
	}
	// Introspection of the app's own live token.
	live := obtain(t, genv, gtn)
	if s, _, b := post(t, genv, "/openapi/v1/oauth/introspect",
		url.Values{"token": {live["access_token"].(string)}, "client_id": {gtn.ClientID}}); s != 200 ||
		b["active"] != true ||
		b["client_id"] != gtn.ClientID {
		t.Errorf("introspect: %d %v", s, b)
	}
	if _, _, b := post(t, genv, "/openapi/v1/oauth/introspect",
		url.Values{"token": {r["access_token"].(string)}, "client_id": {gtn.ClientID}}); b["active"] != false {
		t.Errorf("introspect a revoked token: %v", b)
	}
}

func TestOAuthJWTsVerifyIndependentlyAndForgeriesFail(t *testing.T) {
	t.Parallel()
	env, base, tn := oauthEnv(t, 30*time.Second)
	tok := obtain(t, env, tn)
	access := tok["access_token"].(string)
	set, err := jwk.Fetch(context.Background(), base+"/openapi/v1/oauth/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jws.Verify([]byte(access), jws.WithKeySet(set)); err != nil {
		t.Fatalf("jwx cannot verify the token against the served JWKS: %v", err)
	}
	parts := strings.Split(access, ".")
	var header, claims map[string]any
	decode := func(s string, v any) { b, _ := jwtSegment(s); _ = json.Unmarshal(b, v) }
	decode(parts[0], &header)
	decode(parts[1], &claims)
	if header["typ"] != "at+jwt" || header["kid"] == nil || header["alg"] != "ES256" {
		t.Errorf("header %v", header)
	}
	for _, c := range []string{"iss", "sub", "aud", "client_id", "scope", "iat", "exp", "jti", "ws"} {
		if claims[c] == nil {
			t.Errorf("claim %s missing: %v", c, claims)
		}
	}
	tamper := func(h, c map[string]any, sig string) string {
		hb, _ := json.Marshal(h)
		cb, _ := json.Marshal(c)
		return jwtEncode(hb) + "." + jwtEncode(cb) + "." + sig
	}
	none := map[string]any{"alg": "none", "typ": "at+jwt", "kid": header["kid"]}
	wrongTyp := map[string]any{"alg": "ES256", "typ": "JWT", "kid": header["kid"]}
	richer := map[string]any{}
	for k, v := range claims {
		richer[k] = v
	}
	richer["scope"] = strings.Join(apitest.AllScopes, " ")
	for name, forged := range map[string]string{
		"alg none":      tamper(none, claims, ""),
		"wrong typ":     tamper(wrongTyp, claims, parts[2]),
		"widened scope": tamper(header, richer, parts[2]),
		"garbage":       "not.a.jwt",
		"truncated sig": parts[0] + "." + parts[1] + "." + parts[2][:10],
	} {
		if s, b := bearerGet(t, env, tn.ClientID, forged, "/openapi/v1/me"); s != 401 || errCode(b) != "INVALID_TOKEN" {
			t.Errorf("%s accepted: %d %v", name, s, b)
		}
	}
	// An expired token (signed with our own key here is impossible from outside,
	// so shorten the lifetime instead).
	senv := apitest.New(t, func(d *apitest.Config) { d.OAuth.AccessTTL = time.Second })
	stn := senv.NewTenant(t)
	short := obtain(t, senv, stn)
	time.Sleep(1100 * time.Millisecond)
	if s, b := bearerGet(t, senv, stn.ClientID, short["access_token"].(string), "/openapi/v1/me"); s != 401 ||
		errCode(b) != "TOKEN_EXPIRED" {
		t.Errorf("expired token: %d %v", s, b)
	}
	_ = jwt.SigningMethodES256
}

func TestOAuthTenantIsolation(t *testing.T) {
	t.Parallel()
	env, _, a := oauthEnv(t, 30*time.Second)
	b := env.NewTenant(t)
	dc := deviceCode(t, env, a.ClientID)
	// B's user cannot approve A's code, and learns nothing from trying.
	if r := approve(t, b, dc["user_code"].(string), "approve"); r.Status != 404 || r.ErrorCode() != "NOT_FOUND" {
		t.Fatalf("another workspace approved: %d %s", r.Status, r.Raw)
	}
	if r := approve(t, b, "BBBB-BBBB", "approve"); r.Status != 404 {
		t.Errorf("unknown code: %d", r.Status)
	}
	tok := obtain(t, env, a)
	b.CreateProject(t, map[string]any{"name": "B's secret"})
	// A's token with B's client id, and with A's client id on B's data.
	if s, _ := bearerGet(t, env, b.ClientID, tok["access_token"].(string), "/openapi/v1/resource/project/list"); s != 401 {
		t.Errorf("A's token with B's client id: %d", s)
	}
	_, body := bearerGet(t, env, a.ClientID, tok["access_token"].(string), "/openapi/v1/resource/project/list")
	if strings.Contains(toJSON(body), "B's secret") {
		t.Error("A's token reads B's projects")
	}
	// Wrong codes are rate-limited per user.
	for i := 0; i < 6; i++ {
		approve(t, b, "ZZZZ-ZZZZ", "approve")
	}
	if r := approve(t, b, "ZZZZ-ZZZZ", "approve"); r.Status != 429 || r.ErrorCode() != "RATE_LIMITED" {
		t.Errorf("guessing is not limited: %d %s", r.Status, r.Raw)
	}
	// An app with a live grant is disabled, not deleted.
	if r := a.Console(t, "DELETE", "/openapi/v1/apps/"+a.ClientID, nil); r.Data()["deleted"] != false {
		t.Errorf("an app with an OAuth grant was deleted: %s", r.Raw)
	}
}
