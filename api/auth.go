package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

const (
	localResolution = "pmapi.resolution"
	localUser       = "pmapi.user"
	headerClientID  = "X-Client-ID"
	cookieSession   = "sid"
)

// authFor returns the middleware that establishes op's credential.
func (s *Server) authFor(op Operation) []fiber.Handler {
	switch op.Auth {
	case AuthAdmin:
		return []fiber.Handler{s.requireAdmin, s.origin}
	case AuthSession:
		return []fiber.Handler{s.requireSession, s.origin}
	case AuthKey:
		return []fiber.Handler{s.requireKey, s.limit, s.requireScope(op.Scope), s.origin}
	}
	return nil
}

const localPrincipal = "pmapi.principal"

// requireKey authenticates X-Client-ID plus an API key (or OAuth bearer token).
func (s *Server) requireKey(c *fiber.Ctx) error {
	clientID := c.Get(headerClientID)
	given := keyOrBearer(c.Get(fiber.HeaderAuthorization))
	if looksLikeJWT(given) {
		err := pmapi.Errorf(
			pmapi.CodeInvalidToken,
			"this looks like an OAuth access token: send it as Authorization: Bearer <token>",
		)
		challengeBearer(c, err)
		return err
	}
	p, err := s.Auth.Authenticate(c.UserContext(), clientID, given)
	if err != nil {
		challengeBearer(c, err)
		return err
	}
	c.Locals(localClientID, clientID)
	c.Locals(localWorkspace, p.Workspace.ID.String())
	c.Locals(localPrincipal, p)
	return c.Next()
}

// requireScope refuses a principal without the operation's scope; an empty scope
// means any valid credential will do.
func (s *Server) requireScope(scope string) fiber.Handler {
	if scope == "" {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	want := authz.Scope(scope)
	return func(c *fiber.Ctx) error {
		if !principalOf(c).Scopes.Has(want) {
			challengeScope(c, scope)
			return pmapi.Errorf(pmapi.CodeInsufficientScope, "this operation needs the %s scope", scope).With("scope", scope)
		}
		return c.Next()
	}
}

func principalOf(c *fiber.Ctx) authz.Principal {
	return c.Locals(localPrincipal).(authz.Principal)
}

// requireAdmin checks the operator token in constant time. Without a configured
// token the admin API does not exist (404), so it cannot be guessed at.
func (s *Server) requireAdmin(c *fiber.Ctx) error {
	if s.AdminToken == "" {
		return pmapi.Errorf(pmapi.CodeNotFound, "no such route")
	}
	given, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok || given == "" {
		err := pmapi.Errorf(pmapi.CodeUnauthenticated, "the admin API needs Authorization: Bearer <operator token>")
		challengeAdmin(c, err)
		return err
	}
	// Hashing first makes the comparison constant-time in the length too.
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(s.AdminToken))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		err := pmapi.Errorf(pmapi.CodeInvalidToken, "operator token is not valid")
		challengeAdmin(c, err)
		return err
	}
	return c.Next()
}

// resolveClient maps X-Client-ID to its workspace, refusing suspended ones.
func (s *Server) resolveClient(c *fiber.Ctx) (tenant.Resolution, error) {
	clientID := c.Get(headerClientID)
	if clientID == "" {
		return tenant.Resolution{}, pmapi.Errorf(pmapi.CodeUnauthenticated, "X-Client-ID header is required")
	}
	res, err := s.Directory.Resolve(c.UserContext(), clientID)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return res, pmapi.Errorf(pmapi.CodeInvalidToken, "unknown client id")
	}
	if err != nil {
		return res, err
	}
	c.Locals(localClientID, clientID)
	c.Locals(localWorkspace, res.Workspace.ID.String())
	if res.Workspace.Status == tenant.StatusSuspended {
		return res, pmapi.Errorf(pmapi.CodeWorkspaceSuspended, "this workspace is suspended")
	}
	c.Locals(localResolution, res)
	return res, nil
}

// requireSession authenticates a console user: X-Client-ID plus the sid cookie.
func (s *Server) requireSession(c *fiber.Ctx) error {
	sid := c.Cookies(cookieSession)
	if c.Get(headerClientID) == "" || sid == "" {
		err := pmapi.Errorf(pmapi.CodeUnauthenticated, "X-Client-ID header and sid cookie are required")
		challengeSession(c, err)
		return err
	}
	res, err := s.resolveClient(c)
	if err != nil {
		challengeSession(c, err)
		return err
	}
	user, err := authz.VerifySession(c.UserContext(), res.Shard, res.Workspace.ID, sid)
	if err != nil {
		challengeSession(c, err)
		return err
	}
	c.Locals(localUser, user)
	return c.Next()
}

func resolutionOf(c *fiber.Ctx) tenant.Resolution {
	return c.Locals(localResolution).(tenant.Resolution)
}

func userOf(c *fiber.Ctx) authz.User {
	return c.Locals(localUser).(authz.User)
}
