package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// KeyView is an API key without its value.
type KeyView struct {
	ID         string     `json:"id" example:"key_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ClientID   string     `json:"clientId" example:"pm_cli_4Yq0cJ2bW8rT1mN6pK3s"`
	Name       string     `json:"name" example:"CI deploy"`
	Prefix     string     `json:"prefix" doc:"First 13 characters of the key" example:"pmk_7Hq2LmX9v"`
	LastFour   string     `json:"lastFour" example:"vDNk"`
	Scopes     []string   `json:"scopes" example:"[\"tasks:read\",\"tasks:write\"]"`
	Status     string     `json:"status" enum:"ACTIVE,EXPIRED,REVOKED"`
	ExpiresAt  *time.Time `json:"expiresAt" example:"2027-01-31T00:00:00Z"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt" doc:"Updated in batches, at most once a minute"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

// KeyCreated is KeyView plus the key's value, returned once (creation and
// regenerate).
type KeyCreated struct {
	KeyView
	APIKey string `json:"apiKey" doc:"The full key; shown only in this response, stored as SHA-256" example:"pmk_7Hq2LmX9vB4cR8nT1yW6zK3pD5sF0gJa38vDNk"`
	// PreviousValidUntil is when the replaced value stops (regenerate with grace).
	PreviousValidUntil *time.Time `json:"previousValidUntil,omitempty"`
}

// KeyList is a page of keys.
type KeyList PageOf[KeyView]

// CreateKeyRequest is the body of key creation.
type CreateKeyRequest struct {
	Name      string     `json:"name,omitempty" doc:"Defaults to \"API key\"" example:"CI deploy"`
	Scopes    []string   `json:"scopes" doc:"A subset of the app's declared scopes" example:"[\"tasks:read\",\"tasks:write\"]"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"In the future; omitted for a key that does not expire" example:"2027-01-31T00:00:00Z"`
}

// RenameKeyRequest renames a key.
type RenameKeyRequest struct {
	Name string `json:"name" example:"CI deploy (rotated)"`
}

// RenewKeyRequest moves a key's expiry; the body may be left out.
type RenewKeyRequest struct {
	ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"New expiry; default 90 days from now" example:"2027-04-30T00:00:00Z"`
}

// RegenerateKeyRequest asks for a new value; the body may be left out.
type RegenerateKeyRequest struct {
	GraceSeconds int `json:"graceSeconds,omitempty" doc:"How long the old value keeps working, 0 to 86400; default 0 (stops at once)" example:"3600"`
}

func keyView(k authz.Key) KeyView {
	status := "ACTIVE"
	switch {
	case k.RevokedAt != nil:
		status = "REVOKED"
	case k.ExpiresAt != nil && !time.Now().Before(*k.ExpiresAt):
		status = "EXPIRED"
	}
	return KeyView{
		ID:         pmapi.FormatID(authz.KeyIDPrefix, k.ID),
		ClientID:   k.ClientID,
		Name:       k.Name,
		Prefix:     k.Prefix,
		LastFour:   k.LastFour,
		Scopes:     k.Scopes.Names(),
		Status:     status,
		ExpiresAt:  k.ExpiresAt,
		CreatedAt:  k.CreatedAt,
		LastUsedAt: k.LastUsedAt,
		RevokedAt:  k.RevokedAt,
	}
}

func (s *Server) keyOperations() []Operation {
	const tag = "API keys"
	base := "/openapi/v1/apps/{clientId}/keys"
	return []Operation{
		{
			Method:      http.MethodPost,
			Path:        base,
			ID:          "createKey",
			Fails:       []pmapi.Code{pmapi.CodeScopeNotAllowed, pmapi.CodeQuotaExceeded},
			Tag:         tag,
			Auth:        AuthSession,
			Idempotent:  true,
			SecretField: "apiKey",
			Summary:     "Issue an API key; its value is returned once",
			Body:        CreateKeyRequest{},
			Result:      KeyCreated{},
			Status:      http.StatusCreated,
			Handler:     s.createKey,
		},
		{Method: http.MethodGet, Path: base, ID: "listKeys", Tag: tag, Auth: AuthSession,
			Summary: "The app's keys, revoked ones included; values never appear", Query: ListQuery{}, Result: KeyList{},
			Status: http.StatusOK, Handler: s.listKeys},
		{
			Method:  http.MethodDelete,
			Path:    base + "/{keyId}",
			ID:      "revokeKey",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    AuthSession,
			Summary: "Revoke a key: every request with it fails with 401 INVALID_TOKEN at once; the record is kept",
			Result:  KeyView{},
			Status:  http.StatusOK,
			Handler: s.revokeKey,
		},
		{
			Method:      http.MethodPost,
			Path:        base + "/{keyId}/regenerate",
			ID:          "regenerateKey",
			Fails:       []pmapi.Code{pmapi.CodeConflict},
			Tag:         tag,
			Auth:        AuthSession,
			SecretField: "apiKey",
			Summary:     "Give the key a new value (returned once); the old one stops at once or after graceSeconds",
			Body:        RegenerateKeyRequest{},
			Result:      KeyCreated{},
			Status:      http.StatusCreated,
			Handler:     s.regenerateKey,
		},
		{Method: http.MethodPatch, Path: base + "/{keyId}/name", ID: "renameKey", Tag: tag, Auth: AuthSession,
			Summary: "Rename a key", Body: RenameKeyRequest{}, Result: KeyView{}, Status: http.StatusOK, Handler: s.renameKey},
		{
			Method:  http.MethodPost,
			Path:    base + "/{keyId}/renew",
			ID:      "renewKey",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    AuthSession,
			Summary: "Move a key's expiry (default: 90 days from now)",
			Body:    RenewKeyRequest{},
			Result:  KeyView{},
			Status:  http.StatusCreated,
			Handler: s.renewKey,
		},
	}
}

func (s *Server) createKey(c *fiber.Ctx) error {
	req, err := decodeBody[CreateKeyRequest](c)
	if err != nil {
		return err
	}
	name := req.Name
	if !bodyHas(c, "name") {
		name = "API key"
	}
	if name, err = authz.ValidateName(name); err != nil {
		return err
	}
	scopes, err := requiredScopes(req.Scopes, "scopes is required")
	if err != nil {
		return err
	}
	res := resolutionOf(c)
	key, value, err := authz.CreateKey(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"),
		authz.NewKey{Name: name, Scopes: scopes, ExpiresAt: req.ExpiresAt})
	if err != nil {
		return err
	}
	return createdOnce(c, KeyCreated{KeyView: keyView(key), APIKey: value})
}

func (s *Server) listKeys(c *fiber.Ctx) error {
	res := resolutionOf(c)
	return pageAfter(c, "keys", func(raw string, limit int) ([]authz.Key, error) {
		after, err := cursorID(raw)
		if err != nil {
			return nil, err
		}
		return authz.ListKeys(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), after, limit)
	}, func(k authz.Key) string { return k.ID.String() }, keyView)
}

// keyTarget reads the path's key id; a malformed one names nothing (404).
func keyTarget(c *fiber.Ctx) (tenant.Resolution, uuid.UUID, error) {
	id, err := pmapi.ParseID(authz.KeyIDPrefix, c.Params("keyId"), "key")
	return resolutionOf(c), id, err
}

// keyChange is an authz change of one key of an app.
type keyChange func(
	ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID,
) (authz.Key, error)

// changeKey runs change on the path's key and answers its view with status.
// When forget, this instance forgets the key before answering; others hear
// the notification committed with the change.
func (s *Server) changeKey(c *fiber.Ctx, status int, forget bool, change keyChange) error {
	res, id, err := keyTarget(c)
	if err != nil {
		return err
	}
	key, err := change(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), id)
	if err != nil {
		return err
	}
	if forget {
		s.Auth.Invalidate(tenant.KeyChanged(id))
	}
	return respond(c, status, keyView(key))
}

func (s *Server) revokeKey(c *fiber.Ctx) error {
	return s.changeKey(c, http.StatusOK, true, authz.RevokeKey)
}

func (s *Server) regenerateKey(c *fiber.Ctx) error {
	req, err := decodeOptionalBody[RegenerateKeyRequest](c)
	if err != nil {
		return err
	}
	res, id, err := keyTarget(c)
	if err != nil {
		return err
	}
	grace := time.Duration(req.GraceSeconds) * time.Second
	key, value, err := authz.RegenerateKey(c.UserContext(), res.Shard, res.Workspace.ID, c.Params("clientId"), id, grace)
	if err != nil {
		return err
	}
	s.Auth.Invalidate(tenant.KeyChanged(id))
	out := KeyCreated{KeyView: keyView(key), APIKey: value}
	if grace > 0 {
		until := time.Now().Add(grace).UTC().Truncate(time.Second)
		out.PreviousValidUntil = &until
	}
	return createdOnce(c, out)
}

func (s *Server) renameKey(c *fiber.Ctx) error {
	req, err := decodeBody[RenameKeyRequest](c)
	if err != nil {
		return err
	}
	name, err := authz.ValidateName(req.Name)
	if err != nil {
		return err
	}
	return s.changeKey(
		c,
		http.StatusOK,
		false,
		func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID) (authz.Key, error) {
			return authz.RenameKey(ctx, shard, ws, clientID, id, name)
		},
	)
}

func (s *Server) renewKey(c *fiber.Ctx) error {
	req, err := decodeOptionalBody[RenewKeyRequest](c)
	if err != nil {
		return err
	}
	return s.changeKey(
		c,
		http.StatusCreated,
		true,
		func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID) (authz.Key, error) {
			return authz.RenewKey(ctx, shard, ws, clientID, id, req.ExpiresAt)
		},
	)
}
