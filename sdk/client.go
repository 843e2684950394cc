package pmapisdk

import (
	"context"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
)

// Credential sets the Authorization header of a request.
type Credential func(ctx context.Context, r *http.Request) error

// APIKey authenticates with an API key (`pmk_...`), sent bare as pmapi expects.
func APIKey(key string) Credential {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", key)
		return nil
	}
}

// Token authenticates with OAuth access tokens from ts (refreshed by it when
// they expire), sent as `Bearer <token>`.
func Token(ts oauth2.TokenSource) Credential {
	return func(_ context.Context, r *http.Request) error {
		tok, err := ts.Token()
		if err != nil {
			return err
		}
		tok.SetAuthHeader(r)
		return nil
	}
}

// New is the generated client for the server at baseURL (e.g.
// http://127.0.0.1:8080), calling as the app clientID with cred.
func New(baseURL, clientID string, cred Credential, opts ...ClientOption) (*ClientWithResponses, error) {
	opts = append([]ClientOption{WithRequestEditorFn(func(ctx context.Context, r *http.Request) error {
		r.Header.Set("X-Client-ID", clientID)
		return cred(ctx, r)
	})}, opts...)
	return NewClientWithResponses(strings.TrimSuffix(baseURL, "/"), opts...)
}

// OAuthConfig is the golang.org/x/oauth2 configuration of the app clientID's
// device authorization grant (RFC 8628) against the server at baseURL: call
// DeviceAuth, show the user the verification URI and code, then
// DeviceAccessToken; TokenSource refreshes the token.
func OAuthConfig(baseURL, clientID string, scopes ...string) *oauth2.Config {
	base := strings.TrimSuffix(baseURL, "/")
	return &oauth2.Config{ClientID: clientID, Scopes: scopes, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: base + "/openapi/v1/oauth/device/code",
		TokenURL:      base + "/openapi/v1/oauth/token",
		AuthStyle:     oauth2.AuthStyleInParams,
	}}
}
