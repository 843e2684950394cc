package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
)

// Credentials as people type them, and the challenge every 401 carries (RFC
// 9110 section 11.6.1), in RFC 6750's form for bearer credentials.

const realm = "pmapi"

// keyOrBearer normalises an Authorization value: the scheme name is
// case-insensitive (RFC 9110 section 11.1), and `Bearer pmk_...` (how Stripe
// and GitHub take their keys) is the API key itself. Anything else after
// Bearer is an OAuth access token, as before.
func keyOrBearer(h string) string {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return h
	}
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, authz.KeyPrefix) {
		return rest
	}
	return "Bearer " + rest
}

// looksLikeJWT catches an access token sent without its scheme, which would
// otherwise be judged, and refused, as a malformed API key.
func looksLikeJWT(h string) bool {
	return strings.HasPrefix(h, "eyJ") && strings.Count(h, ".") == 2
}

// challengeBearer sets RFC 6750's challenge for a failed resource call: no
// error attributes when no credential came (section 3.1), invalid_request when
// the credential came without its client id, invalid_token otherwise.
func challengeBearer(c *fiber.Ctx, err error) {
	e := pmapi.AsError(err)
	switch {
	case e.Code != pmapi.CodeUnauthenticated && e.Code != pmapi.CodeInvalidToken && e.Code != pmapi.CodeTokenExpired:
		return
	case c.Get(fiber.HeaderAuthorization) == "":
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="`+realm+`"`)
	case e.Code == pmapi.CodeUnauthenticated:
		c.Set(
			fiber.HeaderWWWAuthenticate,
			`Bearer realm="`+realm+`", error="invalid_request", error_description="`+quotable(e.Message)+`"`,
		)
	default:
		c.Set(
			fiber.HeaderWWWAuthenticate,
			`Bearer realm="`+realm+`", error="invalid_token", error_description="`+quotable(e.Message)+`"`,
		)
	}
}

// challengeScope is RFC 6750's answer to a credential without the scope.
func challengeScope(c *fiber.Ctx, scope string) {
	c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="`+realm+`", error="insufficient_scope", scope="`+scope+`"`)
}

// challengeSession names the cookie a console call lacks. Cookies have no
// registered scheme; this is the form of draft-broyer-http-cookie-auth, which
// tells a person or a tool which cookie to send.
func challengeSession(c *fiber.Ctx, err error) {
	e := pmapi.AsError(err)
	if e.Code != pmapi.CodeUnauthenticated && e.Code != pmapi.CodeInvalidToken && e.Code != pmapi.CodeTokenExpired {
		return
	}
	v := `Cookie realm="` + realm + ` console", cookie-name="` + cookieSession + `"`
	if e.Code != pmapi.CodeUnauthenticated {
		v += `, error="invalid_token", error_description="` + quotable(e.Message) + `"`
	}
	c.Set(fiber.HeaderWWWAuthenticate, v)
}

// challengeAdmin is the operator API's bearer challenge, unless the caller
// set its own (River UI asks browsers for Basic).
func challengeAdmin(c *fiber.Ctx, err error) {
	if len(c.Response().Header.Peek(fiber.HeaderWWWAuthenticate)) > 0 {
		return
	}
	if e := pmapi.AsError(err); e.Code == pmapi.CodeUnauthenticated || e.Code == pmapi.CodeInvalidToken {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="`+realm+` admin"`)
	}
}

// quotable keeps what RFC 6750 allows inside error_description.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
