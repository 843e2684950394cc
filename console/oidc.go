package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"
)

// Sign-in with OpenID Connect: the authorization code flow with PKCE (RFC
// 7636, S256) and a nonce. The browser keeps the state in a cookie scoped to
// the callback; the server keeps the nonce, the verifier and where to return
// under the state's hash (signinstore.go), taken once.

const (
	cookieSignIn = "pmapi_signin"
	signInTTL    = 10 * time.Minute
)

// provider is the identity provider, discovered on first use (a provider
// that is down when pmapi starts is tried again at the next sign-in).
type provider struct {
	cfg OIDCConfig
	mu  sync.Mutex
	p   *oidc.Provider
}

func newProvider(cfg OIDCConfig) *provider { return &provider{cfg: cfg} }

func (p *provider) context(ctx context.Context) context.Context {
	if p.cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, p.cfg.HTTPClient)
		ctx = context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
	}
	return ctx
}

func (p *provider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p != nil {
		return p.p, nil
	}
	ctx, cancel := context.WithTimeout(p.context(ctx), 10*time.Second)
	defer cancel()
	found, err := oidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	p.p = found
	return found, nil
}

// oauth2Config is the code flow's client, redirecting to redirectURI.
func (p *provider) oauth2Config(found *oidc.Provider, redirectURI string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: found.Endpoint(),
		RedirectURL: redirectURI, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// loginState is the server's half of an authorization request.
type loginState struct {
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	ReturnTo string `json:"returnTo"`
}

// redirectURI is where the provider sends the browser back.
func (cn *Console) redirectURI(c *fiber.Ctx) string {
	base := cn.cfg.PublicURL
	if base == "" {
		base = c.Protocol() + "://" + string(c.Context().Host())
	}
	return strings.TrimSuffix(base, "/") + Prefix + "/callback"
}

func (cn *Console) login(c *fiber.Ctx) error {
	back, ok := returnTo(c.Query("return_to"))
	if !ok {
		return cn.render(c, http.StatusBadRequest, "message", view{Title: "Not a console address",
			Message: "This sign-in link asks to return to an address outside the console, so it was not followed. " +
				"Sign in from the console itself.", Back: Prefix + "/login"})
	}
	if cn.oidc == nil {
		return cn.render(c, http.StatusServiceUnavailable, "signin", view{Title: "Sign in", Data: cn.dev != nil})
	}
	found, err := cn.oidc.discover(c.UserContext())
	if err != nil {
		cn.cfg.Log.Error("console: identity provider discovery", "issuer", cn.oidc.cfg.Issuer, "error", err.Error())
		return cn.render(c, http.StatusBadGateway, "message", view{Title: "Sign-in is unavailable",
			Message: "The identity provider could not be reached. Try again in a minute; if it persists, tell the operator.",
			Back:    Prefix + "/login"})
	}
	st := loginState{Nonce: oauth2.GenerateVerifier(), Verifier: oauth2.GenerateVerifier(), ReturnTo: back}
	state, err := cn.put(c.UserContext(), kindLogin, st, signInTTL)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	c.Cookie(
		&fiber.Cookie{Name: cookieSignIn, Value: state, Path: Prefix + "/callback", MaxAge: int(signInTTL.Seconds()),
			HTTPOnly: true, Secure: !cn.cfg.Dev, SameSite: fiber.CookieSameSiteLaxMode},
	)
	to := cn.oidc.oauth2Config(found, cn.redirectURI(c)).AuthCodeURL(state, oidc.Nonce(st.Nonce),
		oauth2.S256ChallengeOption(st.Verifier))
	return c.Redirect(to, http.StatusSeeOther)
}

// signInFailed is the page of a sign-in that did not work; no session.
func (cn *Console) signInFailed(c *fiber.Ctx, status int, title, msg string) error {
	return cn.render(c, status, "message", view{Title: title, Message: msg, Back: Prefix + "/login"})
}

func (cn *Console) callback(c *fiber.Ctx) error {
	c.Cookie(&fiber.Cookie{Name: cookieSignIn, Value: "", Path: Prefix + "/callback", Expires: time.Unix(0, 0),
		HTTPOnly: true, Secure: !cn.cfg.Dev, SameSite: fiber.CookieSameSiteLaxMode})
	if cn.oidc == nil {
		return cn.signInFailed(
			c,
			http.StatusNotFound,
			"Sign-in is not configured",
			"This console has no identity provider.",
		)
	}
	state, cookie := c.Query("state"), c.Cookies(cookieSignIn)
	var st loginState
	if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(cookie)) != 1 {
		return cn.signInFailed(c, http.StatusBadRequest, "Sign-in expired",
			"This sign-in was not started in this browser, was used already or has expired. Sign in again.")
	}
	if err := cn.take(c.UserContext(), kindLogin, state, &st); err != nil {
		if errors.Is(err, errSpent) {
			return cn.signInFailed(c, http.StatusBadRequest, "Sign-in expired",
				"This sign-in was used already or has expired. Sign in again.")
		}
		return cn.fail(c, internalError(err))
	}
	if e := c.Query("error"); e != "" {
		return cn.signInFailed(c, http.StatusUnauthorized, "Not signed in",
			"The identity provider did not sign you in ("+limit(e+": "+c.Query("error_description"), 200)+").")
	}
	email, err := cn.verifiedEmail(c, st)
	if err != nil {
		var refused *refusal
		if errors.As(err, &refused) {
			return cn.signInFailed(c, http.StatusUnauthorized, refused.title, refused.msg)
		}
		cn.cfg.Log.Error("console: sign-in", "error", err.Error())
		return cn.signInFailed(c, http.StatusBadGateway, "Not signed in",
			"The identity provider's answer could not be checked. Sign in again; if it persists, tell the operator.")
	}
	return cn.signInEmail(c, email, st.ReturnTo)
}

// refusal is a sign-in the person can be told about.
type refusal struct{ title, msg string }

func (r *refusal) Error() string { return r.msg }

// verifiedEmail redeems the code (with the PKCE verifier), verifies the ID
// token (signature, issuer, audience, expiry, nonce) and returns its verified
// email, from the token or else from the UserInfo endpoint.
func (cn *Console) verifiedEmail(c *fiber.Ctx, st loginState) (string, error) {
	ctx, cancel := context.WithTimeout(cn.oidc.context(c.UserContext()), 15*time.Second)
	defer cancel()
	found, err := cn.oidc.discover(ctx)
	if err != nil {
		return "", err
	}
	code := c.Query("code")
	if code == "" {
		return "", &refusal{"Not signed in", "The identity provider sent no authorization code. Sign in again."}
	}
	tok, err := cn.oidc.oauth2Config(found, cn.redirectURI(c)).Exchange(ctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return "", &refusal{
				"Not signed in",
				"The identity provider refused the sign-in code (used already, or expired). Sign in again.",
			}
		}
		return "", fmt.Errorf("code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", errors.New("the token response has no id_token")
	}
	idt, err := found.Verifier(&oidc.Config{ClientID: cn.oidc.cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		return "", fmt.Errorf("id token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return "", &refusal{
			"Not signed in",
			"The identity provider's answer does not belong to this sign-in. Sign in again.",
		}
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return "", err
	}
	email, verified := claims.Email, claims.EmailVerified == true || claims.EmailVerified == "true"
	if email == "" {
		info, err := found.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return "", fmt.Errorf("userinfo: %w", err)
		}
		if info.Subject != idt.Subject {
			return "", errors.New("userinfo names another subject than the id token")
		}
		email, verified = info.Email, info.EmailVerified
	}
	if email == "" {
		return "", &refusal{"No email address", "The identity provider did not share your email address, " +
			"which the console signs you in by. Ask the operator to release the email claim to pmapi."}
	}
	if !verified {
		return "", &refusal{"Email not verified", "The identity provider has not verified the address " + email +
			". Verify it there, then sign in again."}
	}
	return email, nil
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
