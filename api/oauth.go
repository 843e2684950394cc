package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// OAuth endpoints answer in the RFCs' shapes (RFC 6749 section 5, RFC 8628,
// RFC 7009, RFC 7662, RFC 8414), not in the envelope: standard clients such as
// golang.org/x/oauth2 read them unchanged.

// OAuthError is an RFC 6749 section 5.2 error body.
type OAuthError struct {
	Error            string `json:"error" enum:"invalid_request,invalid_client,invalid_grant,unauthorized_client,unsupported_grant_type,invalid_scope,authorization_pending,slow_down,access_denied,expired_token"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// DeviceCodeRequest documents the device authorization request (form-encoded
// or JSON).
type DeviceCodeRequest struct {
	ClientID     string `json:"client_id"`
	Scope        string `json:"scope,omitempty" doc:"Space-separated scopes within the app's declared scopes; default all of them"`
	ClientSecret string `json:"client_secret,omitempty"`
}

// DeviceCodeResponse is RFC 8628 section 3.2.
type DeviceCodeResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code" example:"WDJB-MJHT"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// TokenRequest documents the token endpoint's form.
type TokenRequest struct {
	GrantType    string `json:"grant_type" enum:"urn:ietf:params:oauth:grant-type:device_code,refresh_token"`
	DeviceCode   string `json:"device_code,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	ClientID     string `json:"client_id,omitempty" doc:"Or HTTP Basic"`
	ClientSecret string `json:"client_secret,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

// TokenResponse is RFC 6749 section 5.1.
type TokenResponse struct {
	AccessToken  string `json:"access_token" doc:"An RFC 9068 JWT (ES256, typ at+jwt)"`
	TokenType    string `json:"token_type" enum:"Bearer"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token" doc:"Opaque; rotates on every use"`
	Scope        string `json:"scope"`
}

// RevokeRequest is RFC 7009's form.
type RevokeRequest struct {
	Token         string `json:"token"`
	TokenTypeHint string `json:"token_type_hint,omitempty" enum:"access_token,refresh_token"`
	ClientID      string `json:"client_id,omitempty"`
	ClientSecret  string `json:"client_secret,omitempty"`
}

// Empty is an empty JSON object (RFC 7009's 200).
type Empty map[string]string

// ApproveRequest approves or denies a user code.
type ApproveRequest struct {
	UserCode string `json:"user_code" example:"WDJB-MJHT"`
	Action   string `json:"action" enum:"approve,deny"`
}

// ApproveResult answers an approval.
type ApproveResult struct {
	Status string `json:"status" enum:"APPROVED,DENIED"`
}

// JWKSet is the JWKS document.
type JWKSet struct {
	Keys []authz.JWK `json:"keys"`
}

// ServerMetadata is RFC 8414's document.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	IntrospectionEndpoint             string   `json:"introspection_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
}

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

func (s *Server) oauthOperations() []Operation {
	if s.OAuth == nil {
		return nil
	}
	const tag, base = "OAuth", "/openapi/v1/oauth/"
	oauthErrors := map[int]any{400: OAuthError{}, 401: OAuthError{}}
	return append([]Operation{
		{
			Method:  http.MethodPost,
			Path:    base + "device/code",
			ID:      "oauthDeviceCode",
			Tag:     tag,
			Raw:     true,
			Form:    true,
			Errors:  oauthErrors,
			Summary: "Start a device authorization (RFC 8628)",
			Body:    DeviceCodeRequest{},
			Result:  DeviceCodeResponse{},
			Status:  http.StatusOK,
			Handler: s.deviceCode,
		},
		{
			Method:  http.MethodPost,
			Path:    base + "device/approve",
			ID:      "oauthApprove",
			Fails:   []pmapi.Code{pmapi.CodeRateLimited},
			Tag:     tag,
			Auth:    AuthSession,
			Summary: "A signed-in user approves or denies a user code",
			Body:    ApproveRequest{},
			Result:  ApproveResult{},
			Status:  http.StatusOK,
			Handler: s.approveDevice,
		},
		{
			Method:  http.MethodPost,
			Path:    base + "token",
			ID:      "oauthToken",
			Tag:     tag,
			Raw:     true,
			Form:    true,
			Errors:  oauthErrors,
			Summary: "Token endpoint: device_code and refresh_token grants (RFC 6749, RFC 8628)",
			Body:    TokenRequest{},
			Result:  TokenResponse{},
			Status:  http.StatusOK,
			Handler: s.token,
		},
		{
			Method:  http.MethodPost,
			Path:    base + "refresh",
			ID:      "oauthRefresh",
			Tag:     tag,
			Raw:     true,
			Form:    true,
			Errors:  oauthErrors,
			Summary: "The refresh_token grant (also accepted at the token endpoint)",
			Body:    TokenRequest{},
			Result:  TokenResponse{},
			Status:  http.StatusOK,
			Handler: s.refresh,
		},
		{
			Method:  http.MethodPost,
			Path:    base + "revoke",
			ID:      "oauthRevoke",
			Tag:     tag,
			Raw:     true,
			Form:    true,
			Errors:  oauthErrors,
			Summary: "Revoke a token and its family (RFC 7009); unknown tokens are not an error",
			Body:    RevokeRequest{},
			Result:  Empty{},
			Status:  http.StatusOK,
			Handler: s.revoke,
		},
		{
			Method:  http.MethodPost,
			Path:    base + "introspect",
			ID:      "oauthIntrospect",
			Tag:     tag,
			Raw:     true,
			Form:    true,
			Errors:  oauthErrors,
			Summary: "Introspect one of the app's own tokens (RFC 7662)",
			Body:    RevokeRequest{},
			Result:  authz.Introspection{},
			Status:  http.StatusOK,
			Handler: s.introspect,
		},
		{Method: http.MethodGet, Path: base + "jwks.json", ID: "oauthJWKS", Tag: tag, Raw: true,
			Summary: "Public keys that verify access tokens", Result: JWKSet{}, Status: http.StatusOK, Handler: s.jwks},
		{Method: http.MethodGet, Path: "/.well-known/oauth-authorization-server", ID: "oauthMetadata", Tag: tag, Raw: true,
			Summary: "Authorization server metadata (RFC 8414)", Result: ServerMetadata{}, Status: http.StatusOK,
			Handler: s.metadata},
	}, s.devicePageOperations()...)
}

// oauthFail writes an RFC 6749 error; invalid_client authenticated by header is
// 401 with a Basic challenge.
func oauthFail(c *fiber.Ctx, code, desc string, viaHeader bool) error {
	status := http.StatusBadRequest
	if code == "invalid_client" && viaHeader {
		status = http.StatusUnauthorized
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="pmapi"`)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).JSON(OAuthError{Error: code, ErrorDescription: desc})
}

// formValues reads a form-encoded or JSON body.
func formValues(c *fiber.Ctx) url.Values {
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		var m map[string]any
		out := url.Values{}
		if json.Unmarshal(c.Body(), &m) == nil {
			for k, v := range m {
				if s, ok := v.(string); ok {
					out.Set(k, s)
				}
			}
		}
		return out
	}
	v, _ := url.ParseQuery(string(c.Body()))
	return v
}

type oauthClient struct {
	id        string
	res       tenant.Resolution
	app       authz.App
	viaHeader bool
}

// authenticateClient reads client credentials from HTTP Basic or the body and
// checks them: an unknown or DISABLED app, a console client, or a wrong secret
// is invalid_client. Device-flow clients are public, so the secret may be absent.
func (s *Server) authenticateClient(c *fiber.Ctx, form url.Values) (oauthClient, *authz.TokenError) {
	cl := oauthClient{id: form.Get("client_id")}
	secret := form.Get("client_secret")
	if raw, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Basic "); ok {
		dec, err := base64.StdEncoding.DecodeString(raw)
		user, pass, found := strings.Cut(string(dec), ":")
		if err != nil || !found {
			return cl, &authz.TokenError{Code: "invalid_client", Description: "malformed Basic credentials"}
		}
		cl.viaHeader = true
		cl.id, _ = url.QueryUnescape(user)
		secret, _ = url.QueryUnescape(pass)
	}
	bad := &authz.TokenError{Code: "invalid_client", Description: "unknown or disabled client"}
	res, err := s.Directory.Resolve(c.UserContext(), cl.id)
	if err != nil || res.Console || res.Workspace.Status != tenant.StatusActive {
		return cl, bad
	}
	app, err := authz.GetApp(c.UserContext(), res.Shard, res.Workspace.ID, cl.id)
	if err != nil || app.Status != authz.AppActive {
		return cl, bad
	}
	if secret != "" {
		ok, err := authz.VerifyAppSecret(c.UserContext(), res.Shard, res.Workspace.ID, cl.id, secret)
		if err != nil || !ok {
			return cl, &authz.TokenError{Code: "invalid_client", Description: "client authentication failed"}
		}
	}
	cl.res, cl.app = res, app
	return cl, nil
}

func (s *Server) deviceCode(c *fiber.Ctx) error {
	form := formValues(c)
	cl, terr := s.authenticateClient(c, form)
	if terr != nil {
		return oauthFail(c, terr.Code, terr.Description, cl.viaHeader)
	}
	scopes := cl.app.Scopes
	if raw := strings.TrimSpace(form.Get("scope")); raw != "" {
		asked, err := authz.ParseScopes("scope", strings.Fields(raw))
		if err != nil || !cl.app.Scopes.Has(asked) {
			return oauthFail(c, "invalid_scope", "scope must be within the app's declared scopes", false)
		}
		scopes = asked
	}
	start, err := s.OAuth.StartDevice(c.UserContext(), cl.res, cl.id, scopes)
	if err != nil {
		return err
	}
	verify := s.baseURL(c) + "/openapi/v1/oauth/device"
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(DeviceCodeResponse{
		DeviceCode:              start.DeviceCode,
		UserCode:                start.UserCode,
		VerificationURI:         verify,
		VerificationURIComplete: verify + "?user_code=" + start.UserCode,
		ExpiresIn:               start.ExpiresIn,
		Interval:                start.Interval,
	})
}

func (s *Server) tokenAnswer(c *fiber.Ctx, t authz.Tokens, err error, viaHeader bool) error {
	if terr, ok := err.(*authz.TokenError); ok {
		return oauthFail(c, terr.Code, terr.Description, viaHeader)
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	return c.JSON(
		TokenResponse{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresIn: t.ExpiresIn, RefreshToken: t.RefreshToken,
			Scope: strings.Join(t.Scopes.Names(), " ")},
	)
}

func (s *Server) token(c *fiber.Ctx) error {
	form := formValues(c)
	switch form.Get("grant_type") {
	case deviceGrant:
		cl, terr := s.authenticateClient(c, form)
		if terr != nil {
			return oauthFail(c, terr.Code, terr.Description, cl.viaHeader)
		}
		if form.Get("device_code") == "" {
			return oauthFail(c, "invalid_request", "device_code is required", false)
		}
		t, err := s.OAuth.RedeemDevice(asApp(c, cl.id), cl.res, cl.id, form.Get("device_code"))
		return s.tokenAnswer(c, t, err, cl.viaHeader)
	case "refresh_token":
		return s.refresh(c)
	case "":
		return oauthFail(c, "invalid_request", "grant_type is required", false)
	}
	return oauthFail(c, "unsupported_grant_type", "grant_type must be "+deviceGrant+" or refresh_token", false)
}

func (s *Server) refresh(c *fiber.Ctx) error {
	form := formValues(c)
	cl, terr := s.authenticateClient(c, form)
	if terr != nil {
		return oauthFail(c, terr.Code, terr.Description, cl.viaHeader)
	}
	if gt := form.Get("grant_type"); gt != "" && gt != "refresh_token" {
		return oauthFail(c, "unsupported_grant_type", "this endpoint takes grant_type=refresh_token", false)
	}
	token := form.Get("refresh_token")
	if token == "" {
		return oauthFail(c, "invalid_request", "refresh_token is required", false)
	}
	var narrow *authz.Scopes
	if raw := strings.TrimSpace(form.Get("scope")); raw != "" {
		asked, err := authz.ParseScopes("scope", strings.Fields(raw))
		if err != nil {
			return oauthFail(c, "invalid_scope", "unknown scope", false)
		}
		narrow = &asked
	}
	t, err := s.OAuth.Refresh(asApp(c, cl.id), cl.res, cl.id, token, narrow)
	return s.tokenAnswer(c, t, err, cl.viaHeader)
}

func (s *Server) revoke(c *fiber.Ctx) error {
	form := formValues(c)
	cl, terr := s.authenticateClient(c, form)
	if terr != nil {
		return oauthFail(c, terr.Code, terr.Description, cl.viaHeader)
	}
	if form.Get("token") == "" {
		return oauthFail(c, "invalid_request", "token is required", false)
	}
	if err := s.OAuth.Revoke(asApp(c, cl.id), cl.res, cl.id, form.Get("token")); err != nil {
		return err
	}
	return c.JSON(Empty{})
}

func (s *Server) introspect(c *fiber.Ctx) error {
	form := formValues(c)
	cl, terr := s.authenticateClient(c, form)
	if terr != nil {
		return oauthFail(c, terr.Code, terr.Description, cl.viaHeader)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(s.OAuth.Introspect(c.UserContext(), cl.res, cl.id, form.Get("token")))
}

func (s *Server) jwks(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.JSON(JWKSet{Keys: s.OAuth.Ring.JWKS(c.UserContext())})
}

func (s *Server) metadata(c *fiber.Ctx) error {
	base := s.baseURL(c) + "/openapi/v1/oauth/"
	return c.JSON(ServerMetadata{
		Issuer: s.OAuth.Issuer, TokenEndpoint: base + "token", DeviceAuthorizationEndpoint: base + "device/code",
		RevocationEndpoint: base + "revoke", IntrospectionEndpoint: base + "introspect", JWKSURI: base + "jwks.json",
		GrantTypesSupported: []string{deviceGrant, "refresh_token"}, ScopesSupported: authz.AllScopeNames(),
		TokenEndpointAuthMethodsSupported: []string{
			"none",
			"client_secret_basic",
			"client_secret_post",
		}, ResponseTypesSupported: []string{},
	})
}

// codeGuesses limits wrong user codes per signed-in user and per client id
// (RFC 8628 section 5.1): 5 in 10 minutes, then 429 until the window passes.
type codeGuesses struct {
	mu    sync.Mutex
	fails map[string][]time.Time
}

const maxGuesses, guessWindow = 5, 10 * time.Minute

func (g *codeGuesses) blocked(keys ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		recent := g.fails[k][:0]
		for _, t := range g.fails[k] {
			if time.Since(t) < guessWindow {
				recent = append(recent, t)
			}
		}
		g.fails[k] = recent
		if len(recent) >= maxGuesses {
			return true
		}
	}
	return false
}

func (g *codeGuesses) fail(keys ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		g.fails[k] = append(g.fails[k], time.Now())
	}
}

// decide is the approval shared by the JSON endpoint and the HTML page.
func (s *Server) decide(c *fiber.Ctx, user authz.User, clientKey, code string, approve bool) error {
	keys := []string{"user:" + user.ID.String(), "client:" + clientKey}
	if s.guesses.blocked(keys...) {
		c.Set(fiber.HeaderRetryAfter, "600")
		return pmapi.Errorf(pmapi.CodeRateLimited, "too many wrong user codes; try again later")
	}
	w, err := s.OAuth.WorkspaceOfUserCode(c.UserContext(), code)
	if err == nil && w.ID != user.WorkspaceID {
		err = pmapi.NotFound("pending authorization")
	}
	if err == nil {
		shard, serr := s.Directory.ShardOf(w)
		if serr != nil {
			return serr
		}
		err = s.OAuth.Decide(c.UserContext(), shard, user, code, approve)
	}
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		s.guesses.fail(keys...)
		// The same answer whether the code never existed, expired, was decided
		// or belongs to another workspace.
		return pmapi.Errorf(pmapi.CodeNotFound, "no pending authorization has this code")
	}
	return err
}

func (s *Server) approveDevice(c *fiber.Ctx) error {
	req, err := decodeBody[ApproveRequest](c)
	if err != nil {
		return err
	}
	if req.Action != "approve" && req.Action != "deny" {
		return pmapi.Invalid("action", "action must be approve or deny")
	}
	if err := s.decide(c, userOf(c), c.Get(headerClientID), req.UserCode, req.Action == "approve"); err != nil {
		return err
	}
	status := "APPROVED"
	if req.Action == "deny" {
		status = "DENIED"
	}
	return respond(c, http.StatusOK, ApproveResult{Status: status})
}
