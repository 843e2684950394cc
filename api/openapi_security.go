package api

import (
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Security scheme names. The first two are the spec's API-key schemes.
const (
	schemeAuthorization = "ApiKeyAuth"
	schemeClientID      = "ClientId"
	schemeSession       = "SessionCookie"
	schemeAdmin         = "AdminToken"
	schemeOAuth         = "OAuth2"
)

// deviceFlowKey holds the device authorization flow in the oauth2 scheme's
// flows. OpenAPI 3.0 and 3.1 have no flow object for RFC 8628; 3.2 added
// `deviceAuthorization` with these very fields, which code generators and
// linters of 3.0 do not know yet (docs/decisions/openapi.md).
const deviceFlowKey = "x-deviceAuthorization"

func securitySchemes(scopes []string) openapi3.SecuritySchemes {
	oauth := openapi3.NewSecurityScheme().WithType("oauth2").
		WithDescription("An OAuth access token from the device authorization grant (RFC 8628) of an app, sent as " +
			"`Authorization: Bearer <token>` with the app's X-Client-ID. The flow's endpoints are in the " +
			"authorization server metadata at /.well-known/oauth-authorization-server (RFC 8414); golang.org/x/oauth2's " +
			"DeviceAuth and DeviceAccessToken work unchanged.")
	oauth.Flows = &openapi3.OAuthFlows{Extensions: map[string]any{deviceFlowKey: map[string]any{
		"deviceAuthorizationUrl": "/openapi/v1/oauth/device/code",
		"tokenUrl":               "/openapi/v1/oauth/token",
		"refreshUrl":             "/openapi/v1/oauth/token",
		"scopes":                 scopeDocs(scopes),
	}}}
	return openapi3.SecuritySchemes{
		schemeAuthorization: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("header").WithName("Authorization").
			WithDescription("An API key (`pmk_...`) as the bare value, or `Bearer <OAuth access token>` (scheme OAuth2)")},
		schemeClientID: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("header").WithName("X-Client-ID").
			WithDescription("The app's client id (`pm_cli_...`), or the workspace's console client id")},
		schemeSession: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("apiKey").WithIn("cookie").WithName("sid").
			WithDescription("A console user's session, sent with X-Client-ID")},
		schemeAdmin: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().
			WithType("http").WithScheme("bearer").
			WithDescription("The operator token, PMAPI_ADMIN_TOKEN")},
		schemeOAuth: &openapi3.SecuritySchemeRef{Value: oauth},
	}
}

// scopeDocs describes each scope: `tasks:write` is "Change tasks".
func scopeDocs(scopes []string) map[string]any {
	out := make(map[string]any, len(scopes))
	for _, s := range scopes {
		res, action, _ := strings.Cut(s, ":")
		res = strings.ReplaceAll(res, "-", " ")
		switch action {
		case "read":
			out[s] = "Read " + res
		case "write":
			out[s] = "Create and change " + res
		default:
			out[s] = strings.ToUpper(action[:1]) + action[1:] + " " + res
		}
	}
	return out
}

// security says which credentials an operation takes: a key-authenticated
// one takes an API key or an OAuth access token with its scope (the API key's
// own scopes cannot be listed on an apiKey scheme; the description says them).
func security(op Operation) *openapi3.SecurityRequirements {
	switch op.Auth {
	case AuthAdmin:
		return &openapi3.SecurityRequirements{openapi3.NewSecurityRequirement().Authenticate(schemeAdmin)}
	case AuthSession:
		return &openapi3.SecurityRequirements{
			openapi3.NewSecurityRequirement().Authenticate(schemeClientID).Authenticate(schemeSession),
		}
	case AuthKey:
		var scopes []string
		if op.Scope != "" {
			scopes = []string{op.Scope}
		}
		return &openapi3.SecurityRequirements{
			openapi3.NewSecurityRequirement().Authenticate(schemeClientID).Authenticate(schemeAuthorization),
			openapi3.NewSecurityRequirement().Authenticate(schemeClientID).Authenticate(schemeOAuth, scopes...),
		}
	}
	return &openapi3.SecurityRequirements{}
}

// describe is the operation's description: what it does (its Description, or
// else its summary) and the credentials and scope it needs.
func describe(op Operation) string {
	d := op.Description
	if d == "" {
		d = op.Summary
	}
	if !strings.HasSuffix(d, ".") {
		d += "."
	}
	switch op.Auth {
	case AuthAdmin:
		return d + "\n\nOperator only: `Authorization: Bearer <PMAPI_ADMIN_TOKEN>`."
	case AuthSession:
		return d + "\n\nCalled by a console user: `X-Client-ID` and the session cookie `sid`."
	case AuthKey:
		if op.Scope != "" {
			return d + "\n\nRequired scope: `" + op.Scope + "` " +
				"(an API key granted it, or an OAuth access token carrying it), with `X-Client-ID`."
		}
		return d + "\n\nRequired scope: none to call it (scopes, if any, are checked as said above); any valid API key " +
			"or OAuth access token, with `X-Client-ID`."
	}
	return d + "\n\nPublic: no credentials."
}

// sortedKeys is the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
